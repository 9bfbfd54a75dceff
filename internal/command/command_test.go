package command_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
)

// seen is what the example program's commands saw.
type seen struct {
	args  []string
	dsn   string
	json  bool
	count int
	res   journal.Resolution
}

// failure is what the fail command fails with: written as a package
// writes its errors, the driver's several lines and all.
var failure = fmt.Errorf("journal: open the database x.db: %w", errors.New("sqlstore: the file is locked:\n\tby process 12"))

// example is a program with a command of each kind the products have.
func example(s *seen) *command.Program {
	var rule command.Resolve
	return &command.Program{
		Name: "example", Intro: "example does things.", More: "It keeps them in a database.",
		ExitCodes: []command.ExitCode{{Code: 3, Meaning: "done, with ambiguous items"}},
		DB:        command.Database{Env: "EXAMPLE_DB", File: "example.db", What: "database"},
		Commands: []*command.Command{
			{Name: "add", Args: []command.Arg{{Name: "BATCH", Help: "the batch"}, {Name: "PATH", Help: "a file", Many: true, Files: true}},
				Summary: "add files", DB: true, JSON: true,
				Flags: func(f *pflag.FlagSet) { f.IntVar(&s.count, "count", 1, "how many") },
				Run: func(_ context.Context, r *command.Run) (err error) {
					s.args, s.json = r.Args, r.JSON
					s.dsn, err = r.DSN()
					return err
				}},
			{Name: "fail", Summary: "fail as a package does",
				Run: func(context.Context, *command.Run) error { return failure }},
			{Name: "ambiguous", Summary: "end with the program's own code", Run: func(context.Context, *command.Run) error { return command.Exit(3) }},
			{Name: "resolve", Args: []command.Arg{{Name: "KEY", Help: "the key"}}, Summary: "settle", Help: command.ResolveHelp,
				Flags: func(f *pflag.FlagSet) { rule.Flags(f, "it was", "it was not") },
				Run: func(_ context.Context, r *command.Run) (err error) {
					s.res, err = rule.Resolution(r)
					return err
				}},
		},
	}
}

type result struct {
	code           int
	stdout, stderr string
}

func run(s *seen, env map[string]string, args ...string) result {
	var out, errOut bytes.Buffer
	code := example(s).Main(context.Background(), args, command.Env{Stdout: &out, Stderr: &errOut,
		Getenv: func(k string) string { return env[k] }})
	return result{code, out.String(), errOut.String()}
}

// TestExitCodesAndMessages checks the exit codes and the first line of
// standard error: a usage error names the problem after the command's
// prefix and says where the usage is; a failure has exactly one prefix.
func TestExitCodesAndMessages(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args  []string
		code  int
		first string // the first line of standard error
	}{
		{[]string{}, 2, "example: give a command"},
		{[]string{"bogus"}, 2, `example: unknown command "bogus"`},
		{[]string{"--bogus", "add"}, 2, "example: unknown flag --bogus"},
		{[]string{"add"}, 2, "example add: give BATCH, the batch"},
		{[]string{"add", "b"}, 2, "example add: give PATH, a file"},
		{[]string{"fail", "x"}, 2, `example fail: unexpected argument "x": example fail takes none`},
		{[]string{"resolve", "k", "x"}, 2, `example resolve: unexpected argument "x" after KEY`},
		{[]string{"add", "b", "p", "--nope"}, 2, "example add: unknown flag --nope"},
		{[]string{"add", "b", "p", "-x"}, 2, "example add: unknown flag -x"},
		{[]string{"add", "b", "p", "--count"}, 2, "example add: --count needs a value"},
		{[]string{"add", "b", "p", "--count", "many"}, 2, `example add: --count is "many": give a whole number`},
		{[]string{"add", "b", "p", "--json=maybe"}, 2, `example add: --json is "maybe"; give true or false, or leave the value out for true`},
		{[]string{"fail"}, 1, "example fail: journal: open the database x.db: sqlstore: the file is locked:"},
		{[]string{"ambiguous"}, 3, ""},
		{[]string{"--db", filepath.Join(dir, "x.db"), "add", "b", "p"}, 0, ""},
		{[]string{"help", "bogus"}, 2, `example help: unknown command "bogus"`},
		{[]string{"completion", "tcsh"}, 2, `example completion: no completion for "tcsh": give bash, zsh or fish`},
	} {
		r := run(&seen{}, nil, c.args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != c.code || first != c.first {
			t.Errorf("%q: exit %d, %q; want %d, %q", c.args, r.code, first, c.code, c.first)
		}
		if c.code == 2 && !strings.Contains(r.stderr, "--help' for usage.") {
			t.Errorf("%q: a usage error that does not say where the usage is:\n%s", c.args, r.stderr)
		}
	}
}

// TestUsageErrorIsOneLine: a usage error is the problem on one line and
// where to read the usage on the next, and not the whole help, which
// would push the problem off the screen.
func TestUsageErrorIsOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "b", "p", "--nope"}, "example add: unknown flag --nope\nRun 'example add --help' for usage.\n"},
		{[]string{"add"}, "example add: give BATCH, the batch\nRun 'example add --help' for usage.\n"},
		{[]string{"bogus"}, "example: unknown command \"bogus\"\nRun 'example --help' for usage.\n"},
	} {
		r := run(&seen{}, nil, c.args...)
		if r.code != 2 || r.stderr != c.want || r.stdout != "" {
			t.Errorf("%q: exit %d, standard error\n%s\nwant exit 2 and\n%s", c.args, r.code, r.stderr, c.want)
		}
	}
	// The pointer leads to the usage.
	if r := run(&seen{}, nil, "add", "--help"); r.code != 0 || !strings.HasPrefix(r.stdout, "usage: example add ") {
		t.Errorf("add --help: exit %d\n%s", r.code, r.stdout)
	}
}

// TestErrorPrintedAsWritten: a failure is printed after the command's
// name exactly as its error reads, lines and package prefixes included:
// nothing between the package and the person rewrites it.
func TestErrorPrintedAsWritten(t *testing.T) {
	r := run(&seen{}, nil, "fail")
	if want := "example fail: " + failure.Error() + "\n"; r.code != 1 || r.stderr != want {
		t.Errorf("fail: exit %d, standard error\n%q\nwant exit 1 and\n%q", r.code, r.stderr, want)
	}
}

// TestFlagsWhereverWritten checks that the shared flags may come before
// the command, that flags may come between and after the arguments, that
// "--" ends them, and that a long flag with one dash is taken as Go's
// flag package took it.
func TestFlagsWhereverWritten(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	for _, args := range [][]string{
		{"--db", db, "--json", "add", "b", "p1", "--count", "3", "p2"},
		{"-db", db, "-json", "add", "b", "-count", "3", "p1", "p2"},
		{"add", "--db=" + db, "b", "p1", "--json", "--count=3", "p2"},
		{"--json", "add", "-db=" + db, "b", "p1", "-count=3", "p2"},
	} {
		var s seen
		if r := run(&s, nil, args...); r.code != 0 || s.dsn != db || !s.json || s.count != 3 || strings.Join(s.args, " ") != "b p1 p2" {
			t.Errorf("%q: exit %d %s; saw %+v", args, r.code, r.stderr, s)
		}
	}
	var s seen
	if r := run(&s, nil, "add", "--db", db, "b", "--", "--count", "-json"); r.code != 0 || s.count != 1 || s.json || strings.Join(s.args, " ") != "b --count -json" {
		t.Errorf("after --: exit %d %s; saw %+v", r.code, r.stderr, s)
	}
}

// TestDatabase checks where --db points: the flag, else the program's
// variable, else a file in the user's data directory, which is made.
func TestDatabase(t *testing.T) {
	data, home := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"EXAMPLE_DB": "postgres://h/db", "XDG_DATA_HOME": data}, []string{"--db", "flag.db"}, "flag.db"},
		{map[string]string{"EXAMPLE_DB": "postgres://h/db", "XDG_DATA_HOME": data}, nil, "postgres://h/db"},
		{map[string]string{"XDG_DATA_HOME": data, "HOME": home}, nil, filepath.Join(data, "example", "example.db")},
		{map[string]string{"HOME": home}, nil, filepath.Join(home, ".local", "share", "example", "example.db")},
	} {
		var s seen
		r := run(&s, c.env, append([]string{"add", "b", "p"}, c.args...)...)
		if r.code != 0 || s.dsn != c.want {
			t.Errorf("%v %q: exit %d %s, database %q; want %q", c.env, c.args, r.code, r.stderr, s.dsn, c.want)
		}
		if _, err := os.Stat(filepath.Dir(c.want)); c.want[0] == '/' && err != nil {
			t.Errorf("the data directory was not made: %v", err)
		}
	}
	r := run(&seen{}, nil, "add", "b", "p")
	if r.code != 1 || !strings.Contains(r.stderr, "example add: no home directory to keep the database in: give --db or $EXAMPLE_DB") {
		t.Errorf("no home: exit %d, %q", r.code, r.stderr)
	}
}

// TestHelp checks that "help COMMAND" and "COMMAND --help" (or -h, or
// -help) print the same help, on standard output, with exit 0, and that
// the program's help lists every command and the exit codes.
func TestHelp(t *testing.T) {
	top := run(&seen{}, nil, "help")
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}} {
		if r := run(&seen{}, nil, args...); r.code != 0 || r.stdout != top.stdout {
			t.Errorf("%q: exit %d, a help unlike 'help':\n%s", args, r.code, r.stdout)
		}
	}
	for _, want := range []string{"example does things.", "usage: example COMMAND", "  add ", "  fail ", "  ambiguous ", "  resolve ",
		"  completion ", "  help ", "It keeps them in a database.", "exit codes:", "  3  done, with ambiguous items"} {
		if !strings.Contains(top.stdout, want) {
			t.Errorf("the program's help lacks %q:\n%s", want, top.stdout)
		}
	}
	for _, name := range []string{"add", "fail", "ambiguous", "resolve", "completion", "help"} {
		h := run(&seen{}, nil, "help", name)
		for _, flag := range []string{"--help", "-h", "-help"} {
			if r := run(&seen{}, nil, name, flag); r.code != 0 || h.code != 0 || r.stdout != h.stdout {
				t.Errorf("%s %s (exit %d) and help %s (exit %d) differ:\n%s\n---\n%s", name, flag, r.code, name, h.code, r.stdout, h.stdout)
			}
		}
		if !strings.HasPrefix(h.stdout, "usage: example "+name+" ") || !strings.Contains(h.stdout, "exit codes:") {
			t.Errorf("help %s:\n%s", name, h.stdout)
		}
	}
	add := run(&seen{}, nil, "help", "add").stdout
	for _, want := range []string{"usage: example add BATCH PATH... [flags]", "Add files.", "--count N", "how many (default 1)", "--db DSN", "--json", "-h, --help"} {
		if !strings.Contains(add, want) {
			t.Errorf("help add lacks %q:\n%s", want, add)
		}
	}
}

// TestResolveRule checks the rule both products' resolve commands share.
func TestResolveRule(t *testing.T) {
	const usage = "example resolve: say either --applied or --not-applied, and --note what you checked"
	for _, c := range []struct {
		args []string
		env  map[string]string
		code int
		want string // the first line of standard error
		res  journal.Resolution
	}{
		{[]string{"--applied"}, nil, 2, usage, journal.Resolution{}},
		{[]string{"--not-applied"}, nil, 2, usage, journal.Resolution{}},
		{[]string{"--note", "checked"}, nil, 2, usage, journal.Resolution{}},
		{[]string{"--applied", "--not-applied", "--note", "checked"}, nil, 2, usage, journal.Resolution{}},
		{[]string{"--applied", "--note", "  "}, nil, 2, usage, journal.Resolution{}},
		{[]string{"--applied", "--note", "in the charges", "--by", "ann"}, nil, 0, "", journal.Resolution{To: journal.Applied, By: "ann", Note: "in the charges"}},
		{[]string{"--not-applied", "--note", "not charged"}, map[string]string{"USER": "bob"}, 0, "", journal.Resolution{To: journal.NotApplied, By: "bob", Note: "not charged"}},
	} {
		var s seen
		r := run(&s, c.env, append([]string{"resolve", "k"}, c.args...)...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if got := s.res; r.code != c.code || first != c.want || got.To != c.res.To || got.By != c.res.By || got.Note != c.res.Note {
			t.Errorf("resolve k %q: exit %d, %q, %+v; want %d, %q, %+v", c.args, r.code, first, s.res, c.code, c.want, c.res)
		}
	}
	if h := run(&seen{}, nil, "help", "resolve").stdout; !strings.Contains(h, command.ResolveHelp) {
		t.Errorf("help resolve does not state the rule:\n%s", h)
	}
}

// TestCompletion checks the scripts for each shell, and the answers the
// program gives them: commands, flags, and files only where an argument
// is a file.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "complete -o default -F __start_example example", "zsh": "#compdef example",
		"fish": "complete -c example"} {
		if r := run(&seen{}, nil, "completion", shell); r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("completion %s: exit %d, no %q in\n%.300s", shell, r.code, want, r.stdout)
		}
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "a"}, []string{"add\tadd files", "ambiguous\tend with the program's own code", ":4"}},
		{[]string{"__complete", "add", "--c"}, []string{"--count\thow many", ":4"}},
		{[]string{"__complete", "add", "b", ""}, []string{":0"}}, // PATH: the shell's files
		{[]string{"__complete", "add", ""}, []string{":4"}},      // BATCH: no files
		{[]string{"__complete", "resolve", "k", "--not"}, []string{"--not-applied\tit was not", "--note\t`TEXT` saying what you checked (required)"}},
	} {
		r := run(&seen{}, nil, c.args...)
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w+"\n") {
				t.Errorf("%q: no %q in\n%s", c.args, w, r.stdout)
			}
		}
	}
}

// TestBashCompletion completes a command line in bash with the script the
// program prints, as a person pressing tab would.
func TestBashCompletion(t *testing.T) {
	bash := testkit.Require(t, testkit.BashCompletion, "bash")
	// The scripts use the functions of the bash-completion package, as
	// the shells of distributions have them.
	const helpers = "/usr/share/bash-completion/bash_completion"
	testkit.RequireFile(t, testkit.BashCompletion, helpers)
	// The program under test, as a binary the script can call.
	dir := filepath.Dir(testkit.Binary(t, "internal/command/testdata/example"))
	script := `source ` + helpers + `
source <(example completion bash)
COMP_WORDS=(example res); COMP_CWORD=1; COMP_LINE="example res"; COMP_POINT=${#COMP_LINE}
__start_example; echo "${COMPREPLY[*]}"
COMP_WORDS=(example resolve k --no); COMP_CWORD=3; COMP_LINE="example resolve k --no"; COMP_POINT=${#COMP_LINE}
__start_example; echo "${COMPREPLY[*]}"`
	cmd := exec.Command(bash, "--norc", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Outside a real completion, compopt complains on standard error.
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 || lines[0] != "resolve" || lines[1] != "--not-applied --note" {
		t.Errorf("bash completed %q (%v)", out, err)
	}
}

// TestVersion: every program says which build it is, as "version" and
// as "--version", in text and in JSON.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := run(&seen{}, nil, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "example ") || !strings.Contains(r.stdout, "go1.") {
			t.Errorf("example %s: exit %d, %q; want the program's name, its version and Go's", strings.Join(args, " "), r.code, r.stdout)
		}
	}
	for _, args := range [][]string{{"version", "--json"}, {"--version", "--json"}, {"--json", "--version"}} {
		r := run(&seen{}, nil, args...)
		var v struct {
			Version   string `json:"version"`
			GoVersion string `json:"go_version"`
			Modified  *bool  `json:"modified"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Version == "" || !strings.HasPrefix(v.GoVersion, "go1.") || v.Modified == nil {
			t.Errorf("example %s: %v, %q; want JSON with version, go_version and modified", strings.Join(args, " "), err, r.stdout)
		}
	}
}

func TestMain(m *testing.M) { testkit.Main(m) }
