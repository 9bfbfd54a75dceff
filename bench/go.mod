module github.com/rubicon-go/rubicon/bench

go 1.26.0

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/rubicon-go/rubicon v0.0.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/rubicon-go/rubicon => ../
