package command_test

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
)

// TestDurationTakesBareSeconds: --timeout 5 is five seconds (it was once a
// parse error), and Go's durations still read as they do.
func TestDurationTakesBareSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "0.25": 250 * time.Millisecond, "90s": 90 * time.Second, "1m30s": 90 * time.Second, "0": 0} {
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var d time.Duration
		command.DurationVar(f, &d, "timeout", time.Minute, "")
		if err := f.Parse([]string{"--timeout", in}); err != nil || d != want {
			t.Errorf("--timeout %s: %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"five", "-1", "NaN", "1e300", "5 s"} {
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var d time.Duration
		command.DurationVar(f, &d, "timeout", time.Minute, "")
		if err := f.Parse([]string{"--timeout", in}); err == nil {
			t.Errorf("--timeout %q: accepted as %v", in, d)
		}
	}
	var d time.Duration
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	command.DurationVar(f, &d, "timeout", 10*time.Minute, "")
	if d != 10*time.Minute || f.Lookup("timeout").DefValue != "10m0s" {
		t.Errorf("the default: %v, %q", d, f.Lookup("timeout").DefValue)
	}
}
