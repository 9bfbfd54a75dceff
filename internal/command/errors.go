package command

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// packagePrefixes are the prefixes the module's packages start their
// errors with, as Go's packages do ("json: ..."): a library's caller
// learns which package spoke. At the command line the command's own
// prefix replaces them: a person reads "toolgate serve: ...", once.
var packagePrefixes = []string{"rubicon: ", "retry: ", "transport: ", "journal: ", "ledger: ", "sqlstore: ",
	"recall: ", "media: ", "provider: ", "sandbox: ", "toolgate: ", "spec: ", "config: ", "risk: "}

// Describe renders an error for the person at the terminal: on one line,
// without the prefixes of the packages it passed through.
func Describe(err error) string {
	msg := err.Error()
	for changed := true; changed; {
		changed = false
		for _, p := range packagePrefixes {
			if strings.HasPrefix(msg, p) {
				msg, changed = msg[len(p):], true
			}
			if strings.Contains(msg, ": "+p) {
				msg, changed = strings.ReplaceAll(msg, ": "+p, ": "), true
			}
		}
	}
	// Drivers report several addresses tried on lines of their own.
	msg = strings.ReplaceAll(msg, ":\n\t", ": ")
	msg = strings.ReplaceAll(msg, "\n\t", "; ")
	return strings.ReplaceAll(msg, "\n", " ")
}

// flagError says what is wrong with a flag, in the words of the usage:
// the flag as written with two dashes, and what to give.
func flagError(err error) string {
	var (
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() != "":
		return "unknown flag -" + notExist.GetSpecifiedShortnames()
	case errors.As(err, &notExist):
		return "unknown flag --" + notExist.GetSpecifiedName()
	case errors.As(err, &required):
		return "--" + required.GetFlag().Name + " needs a value"
	case errors.As(err, &invalid):
		f, v := invalid.GetFlag(), invalid.GetValue()
		return fmt.Sprintf("--%s is %q%s", f.Name, v, want(f.Value.Type()))
	case errors.As(err, &syntax):
		return fmt.Sprintf("%s is not a flag: write --NAME or --NAME=VALUE", syntax.GetSpecifiedFlag())
	}
	return err.Error()
}

// want says what a flag of type typ takes.
func want(typ string) string {
	switch typ {
	case "bool":
		return "; give true or false, or leave the value out for true"
	case "int", "int64", "uint", "uint64":
		return ": give a whole number"
	case "float64":
		return ": give a number"
	case "duration":
		return ": give a duration, such as 30s, 5m or 1h30m"
	}
	return ": not a value it takes"
}
