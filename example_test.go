package rubicon_test

import (
	"fmt"

	"github.com/rubicon-go/rubicon"
)

// A caller tells an ambiguous failure, which needs a person or a look-up at
// the provider, from one that is safe to repeat.
func ExampleIsAmbiguous() {
	errs := []error{
		&rubicon.Error{Method: "POST", URL: "https://api.example.com/v1/orders", Phase: rubicon.Sent, Outcome: rubicon.Unknown, Attempts: 1},
		&rubicon.Error{Method: "POST", URL: "https://api.example.com/v1/orders", Phase: rubicon.NotSent, Outcome: rubicon.NotApplied, Attempts: 4},
	}
	for _, err := range errs {
		wrapped := fmt.Errorf("place order: %w", err)
		switch {
		case rubicon.IsAmbiguous(wrapped):
			fmt.Println("ambiguous: record it and check with the provider before trying again")
		case rubicon.SafeToRetry(wrapped):
			fmt.Println("not applied: safe to try again later")
		}
	}
	// Output:
	// ambiguous: record it and check with the provider before trying again
	// not applied: safe to try again later
}
