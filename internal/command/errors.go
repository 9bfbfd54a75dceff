package command

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

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
