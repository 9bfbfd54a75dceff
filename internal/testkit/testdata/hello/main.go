// Command hello is the program the testkit's tests build and run: it
// writes its first argument to standard output, its second to standard
// error, and exits with the code its third names.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	fmt.Fprint(os.Stdout, os.Args[1])
	fmt.Fprint(os.Stderr, os.Args[2])
	code, _ := strconv.Atoi(os.Args[3])
	os.Exit(code)
}
