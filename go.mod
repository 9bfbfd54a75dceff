module github.com/rubicon-go/rubicon

go 1.26
