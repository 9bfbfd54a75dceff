package recall

import "github.com/rubicon-go/rubicon/recall/store"

// Store returns the archive's storage, for pages that show it (the
// console). What changes an archive goes through the Archive's methods.
func (a *Archive) Store() *store.Store { return a.store }
