package command

import (
	"errors"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// DurationVar declares in f a duration flag that also takes a bare
// number as seconds: --timeout 5 is five seconds, as --timeout 5s and
// --timeout 0.5m are too.
func DurationVar(f *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	f.Var((*duration)(p), name, usage)
}

// duration is a time.Duration flag that reads a bare number as seconds.
type duration time.Duration

func (d *duration) Set(s string) error {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if !(secs >= 0 && secs <= float64(1<<63-1)/float64(time.Second)) { // NaN too
			return errors.New("out of range")
		}
		*d = duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func (d *duration) String() string { return time.Duration(*d).String() }

// Type is "duration", as pflag's own, so that help and errors name it
// alike.
func (d *duration) Type() string { return "duration" }
