//go:build unix

package recall

import (
	"os"
	"syscall"
)

// fileID identifies a directory whatever the path it is reached by.
type fileID struct{ dev, ino uint64 }

func idOf(info os.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}
