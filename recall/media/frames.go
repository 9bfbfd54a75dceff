package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Frames are the MPEG audio frames of an MP3 file, such as a proxy: the
// smallest pieces it can be cut into without decoding. A chunk made of
// whole frames lasts exactly its frames' duration, so that consecutive
// chunks neither overlap nor leave a gap.
type Frames struct {
	// Offsets holds the byte offset of each frame, and then the end of the
	// last one.
	Offsets []int64
	// Each is the duration of one frame (36 ms in a proxy).
	Each time.Duration
}

// Count returns the number of frames.
func (f Frames) Count() int { return max(0, len(f.Offsets)-1) }

// Duration returns the duration of all the frames.
func (f Frames) Duration() time.Duration { return time.Duration(f.Count()) * f.Each }

// Index returns the number of the frame that starts at d, rounded to the
// nearest frame, within [0, Count].
func (f Frames) Index(d time.Duration) int {
	if f.Each <= 0 {
		return 0
	}
	return min(f.Count(), max(0, int((d+f.Each/2)/f.Each)))
}

// bitrates of MPEG audio Layer III, in kbit/s, by bitrate index: MPEG-1,
// then MPEG-2 and 2.5.
var bitrates = [2][15]int{
	{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
	{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
}

// sampleRates by version (MPEG-2.5, reserved, MPEG-2, MPEG-1) and index.
var sampleRates = [4][3]int{{11025, 12000, 8000}, {}, {22050, 24000, 16000}, {44100, 48000, 32000}}

// frameHeader reads a Layer III frame header: the frame's length in bytes
// and its samples.
func frameHeader(h uint32) (length, samples, rate int, ok bool) {
	version := h >> 19 & 3
	layer := h >> 17 & 3
	bi := h >> 12 & 15
	si := h >> 10 & 3
	pad := int(h >> 9 & 1)
	if h>>21 != 0x7ff || version == 1 || layer != 1 || bi == 0 || bi == 15 || si == 3 {
		return 0, 0, 0, false
	}
	rate = sampleRates[version][si]
	if version == 3 {
		return 144*bitrates[0][bi]*1000/rate + pad, 1152, rate, true
	}
	return 72*bitrates[1][bi]*1000/rate + pad, 576, rate, true
}

// ReadFrames lists the frames of the MP3 file path, which must be Layer
// III frames from its first byte to its last (as a proxy is: no tags, no
// Xing header), all at one sample rate.
func ReadFrames(path string) (Frames, error) {
	f, err := os.Open(path)
	if err != nil {
		return Frames{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var out Frames
	var off int64
	var rate, samples int
	var head [4]byte
	for {
		if _, err := io.ReadFull(r, head[:]); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return Frames{}, fmt.Errorf("%s ends inside a frame header at byte %d", path, off)
		}
		length, n, sr, ok := frameHeader(binary.BigEndian.Uint32(head[:]))
		if !ok || (rate != 0 && (sr != rate || n != samples)) {
			return Frames{}, fmt.Errorf("%s is not a plain MP3 stream: no frame header of one sample rate at byte %d", path, off)
		}
		rate, samples = sr, n
		if _, err := r.Discard(length - 4); err != nil {
			return Frames{}, fmt.Errorf("%s ends inside its last frame (at byte %d): the file is cut short", path, off)
		}
		out.Offsets = append(out.Offsets, off)
		off += int64(length)
	}
	out.Offsets = append(out.Offsets, off)
	if rate > 0 {
		out.Each = time.Duration(samples) * time.Second / time.Duration(rate)
	}
	return out, nil
}
