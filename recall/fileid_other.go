//go:build !unix

package recall

import "os"

// fileID is unavailable here: directory links are walked without loop
// detection beyond the depth the file system allows.
type fileID struct{}

func idOf(os.FileInfo) (fileID, bool) { return fileID{}, false }
