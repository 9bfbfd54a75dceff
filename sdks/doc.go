// Package sdks tests rubicon's transport under the vendor SDKs that Go
// programs call paid APIs with: openai-go, anthropic-sdk-go and stripe-go,
// each with its own retry loop above the transport. A loopback server
// fails as a matrix of faults says and counts the paid effects; the table
// of what each SDK does, and what its caller sees, is
// testdata/matrix.golden and docs/sdks.md. Its examples show how to
// install the transport in each SDK.
//
// It is a module of its own so that the SDKs never become dependencies of
// the library's users.
//
//	go test ./...                         # the matrix and the examples
//	go test -run TestSDKMatrix -update    # rewrite the table after a change
package sdks
