package cli

import (
	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall/subtitle"
)

// subtitleFlags are the rules of the cues that srt and vtt transcripts
// are cut into, for the commands that write transcripts.
type subtitleFlags struct {
	rules subtitle.Rules
}

func (sf *subtitleFlags) register(f *pflag.FlagSet) {
	d := subtitle.Default
	f.IntVar(&sf.rules.LineChars, "line-chars", d.LineChars, "srt and vtt: the most characters a subtitle line holds")
	f.IntVar(&sf.rules.Lines, "lines", d.Lines, "srt and vtt: the most lines a cue holds")
	command.DurationVar(f, &sf.rules.MaxDuration, "cue-duration", d.MaxDuration, "srt and vtt: the longest a cue stays on screen, in seconds or such as 7s")
	f.Float64Var(&sf.rules.CharsPerSecond, "reading-speed", d.CharsPerSecond, "srt and vtt: the most characters a second a viewer is asked to read; a cue stays longer for its text, up to the next")
	f.BoolVar(&sf.rules.WordTimes, "word-times", false, "vtt: the time each word is said, inside its cue (<00:00:01.500>), where the provider timed words")
}

// check says, in terms of the flags, what is wrong with the rules.
func (sf *subtitleFlags) check() error {
	if err := sf.rules.Check(); err != nil {
		return command.Usagef("--line-chars, --lines, --cue-duration, --reading-speed: %v", err)
	}
	return nil
}
