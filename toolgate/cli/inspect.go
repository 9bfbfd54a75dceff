package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/toolgate"
)

// inspectCommand is "toolgate inspect": the catalog, tool by tool, as a
// person reviews it before serving it.
func inspectCommand() *command.Command {
	var configPath string
	return &command.Command{
		Name: "inspect", Args: []command.Arg{specArg}, Synopsis: "SPEC [--config FILE] [--json]", JSON: true,
		Summary: "one row per operation: tool, method, path, risk class and why, exposure and why, retry policy, deadline",
		Help: `EXPOSED is yes, confirm (a person accepts each call) or no; REVIEW marks the
tools where the evidence about the class disagrees, listed first in the summary.
AUTH names the security schemes a call authenticates with, or MISSING and the
schemes the operation requires that the configuration gives nothing for (serve
refuses to start then); below the table, each scheme of the document and what
the configuration gives for it. --json has the requirements in full.`,
		Flags: func(f *pflag.FlagSet) { f.StringVar(&configPath, "config", "", "the configuration, a YAML `FILE`") },
		Run: func(ctx context.Context, r *command.Run) error {
			cat, _, err := load(ctx, r.Args[0], configPath)
			if err != nil {
				return loadError(err)
			}
			rows, sum, err := cat.Inspect()
			if err != nil {
				return err
			}
			r.Show(map[string]any{"summary": sum, "tools": rows}, func(w io.Writer) { printInspect(w, rows, sum) })
			return nil
		},
	}
}

func printInspect(w io.Writer, rows []toolgate.Row, sum toolgate.Summary) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tMETHOD\tPATH\tRISK\tREVIEW\tEXPOSED\tAUTH\tRETRY\tDEADLINE\tWHY")
	for _, r := range rows {
		exposed := "no"
		switch {
		case r.Confirm:
			exposed = "confirm"
		case r.Exposed:
			exposed = "yes"
		}
		risk := r.Risk
		if r.Override {
			risk += " (config)"
		}
		review, why := "", strings.Join(r.Reasons, "; ")
		if r.Review {
			review = "review"
			why += "; REVIEW: " + strings.Join(r.ReviewReasons, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s. %s\n", r.Name, r.Method, r.Path, risk, review, exposed, r.Auth, r.Retry, r.Deadline,
			why, r.Exposure)
	}
	tw.Flush()
	confirmed := ""
	if sum.Confirm > 0 {
		confirmed = fmt.Sprintf("; %d confirmed by a person call by call", sum.Confirm)
	}
	fmt.Fprintf(w, "\n%s: %s; %d exposed (%s%s)\n", output.Plural(sum.Tools, "tool"), classCounts(sum.ByClass), sum.Exposed, classCounts(sum.ExposedByClass), confirmed)
	if len(sum.Review) > 0 {
		fmt.Fprintf(w, "review first: %s where the evidence about the class disagrees: %s\n", output.Plural(len(sum.Review), "tool"), strings.Join(sum.Review, ", "))
	}
	pages := ""
	if sum.ListPages > 1 {
		pages = fmt.Sprintf(", in %s (the largest %d bytes)", output.Plural(sum.ListPages, "page"), sum.LargestPage)
	}
	fmt.Fprintf(w, "tools/list: %d bytes, about %d tokens%s (a token per 4 bytes); in search mode %d bytes, about %d tokens\n",
		sum.ListBytes, sum.ListTokens, pages, sum.SearchListBytes, sum.SearchListBytes/4)
	for _, s := range sum.Schemes {
		fmt.Fprintf(w, "scheme %s: %s; %s\n", s.Name, s.What, s.Configured)
	}
	for _, warning := range sum.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	printNotes(w, sum.Notes)
}

// maxNotes is how many notes inspect's table shows; --json gives them all.
const maxNotes = 20

// printNotes prints what loading changed in the document's schemas.
func printNotes(w io.Writer, notes []string) {
	for i, n := range notes {
		if i == maxNotes {
			fmt.Fprintf(w, "note: %d more changes to the document's schemas (--json lists them all)\n", len(notes)-maxNotes)
			break
		}
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func classCounts(m map[string]int) string {
	var parts []string
	for _, c := range []string{"read", "write", "destructive", "privileged"} {
		parts = append(parts, fmt.Sprintf("%d %s", m[c], c))
	}
	return strings.Join(parts, ", ")
}
