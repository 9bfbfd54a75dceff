package command

import (
	"os/user"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/journal"
)

// Resolve is the rule of both products' resolve commands: a person
// settles an ambiguous operation, KEY, once they have checked. They say
// exactly one of --applied and --not-applied, and with --note what they
// checked, which the journal keeps with who decided (--by, by default the
// current user) and when.
type Resolve struct {
	applied, notApplied bool
	note, by            string
}

// ResolveHelp is what the help of a resolve command says of the rule.
const ResolveHelp = `Say exactly one of --applied and --not-applied, and with --note what you
checked (a usage error otherwise, exit 2). The journal keeps the decision
with --note, who decided (--by, by default the current user) and when.`

// Flags declares the flags of the rule in f; applied and notApplied say
// what each decision means for the product.
func (r *Resolve) Flags(f *pflag.FlagSet, applied, notApplied string) {
	f.BoolVar(&r.applied, "applied", false, applied)
	f.BoolVar(&r.notApplied, "not-applied", false, notApplied)
	f.StringVar(&r.note, "note", "", "`TEXT` saying what you checked (required)")
	f.StringVar(&r.by, "by", "", "the `NAME` of who decides (default: the current user)")
}

// Applied reports whether the decision is --applied.
func (r *Resolve) Applied() bool { return r.applied }

// Resolution returns the decision the flags say, or a usage error.
func (r *Resolve) Resolution(run *Run) (journal.Resolution, error) {
	if r.applied == r.notApplied || strings.TrimSpace(r.note) == "" {
		return journal.Resolution{}, Usagef("say either --applied or --not-applied, and --note what you checked")
	}
	res := journal.Resolution{To: journal.Applied, By: r.by, Note: r.note}
	if r.notApplied {
		res.To = journal.NotApplied
	}
	if res.By == "" {
		res.By = run.Getenv("USER")
	}
	if u, err := user.Current(); res.By == "" && err == nil {
		res.By = u.Username
	}
	if res.By == "" {
		return journal.Resolution{}, Usagef("give --by NAME: the current user is not known")
	}
	return res, nil
}
