// Package faultserver forwards to the public package
// github.com/rubicon-go/rubicon/faultserver, where the scripted fault server
// now lives, for the code that still imports it from here.
//
// Deprecated: import github.com/rubicon-go/rubicon/faultserver.
package faultserver

import (
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
)

// Fault is [faultserver.Fault].
type Fault = faultserver.Fault

// Step is [faultserver.Step].
type Step = faultserver.Step

// Request is [faultserver.Request].
type Request = faultserver.Request

// Server is [faultserver.Server].
type Server = faultserver.Server

// The faults, as in package faultserver.
const (
	Answer         = faultserver.Answer
	Refuse         = faultserver.Refuse
	ResetOnAccept  = faultserver.ResetOnAccept
	ResetAfterRead = faultserver.ResetAfterRead
	CloseAfterRead = faultserver.CloseAfterRead
	Hang           = faultserver.Hang
	RefuseStream   = faultserver.RefuseStream
)

// Start is [faultserver.Start].
func Start(steps ...Step) (*Server, error) { return faultserver.Start(steps...) }

// OK is [faultserver.OK].
func OK() Step { return faultserver.OK() }

// Status is [faultserver.Status].
func Status(code int) Step { return faultserver.Status(code) }

// Do is [faultserver.Do].
func Do(f Fault) Step { return faultserver.Do(f) }

// RetryAfter is [faultserver.RetryAfter].
func RetryAfter(code int, wait time.Duration) Step { return faultserver.RetryAfter(code, wait) }

// RetryAfterDate is [faultserver.RetryAfterDate].
func RetryAfterDate(code int, at time.Time) Step { return faultserver.RetryAfterDate(code, at) }
