package faultserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func get(t *testing.T, url string) (*http.Response, error) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	resp, err := c.Post(url, "text/plain", strings.NewReader("hello"))
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func TestScriptIsPlayedInOrder(t *testing.T) {
	s, err := Start(Status(503), RetryAfter(429, 3*time.Second), Do(ResetAfterRead), Do(CloseAfterRead), Do(ResetOnAccept))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	resp, err := get(t, s.URL())
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("step 1: %v %v", resp, err)
	}
	resp, err = get(t, s.URL())
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("step 2: %v %v", resp, err)
	}
	if _, err := get(t, s.URL()); err == nil {
		t.Fatalf("step 3: reset after read answered")
	}
	if _, err := get(t, s.URL()); err == nil {
		t.Fatalf("step 4: close after read answered")
	}
	if _, err := get(t, s.URL()); err == nil {
		t.Fatalf("step 5: reset on accept answered")
	}
	resp, err = get(t, s.URL())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the script: %v %v, want 200", resp, err)
	}
	if got := s.Effects(); got != 5 {
		t.Fatalf("effects = %d, want 5 (every step but reset on accept)", got)
	}
	reqs := s.Requests()
	if len(reqs) != 5 || reqs[2].Fault != ResetAfterRead || reqs[0].BodyBytes != 5 || reqs[0].Method != "POST" ||
		reqs[0].Status != 503 || reqs[1].Status != 429 || reqs[2].Status != 0 || reqs[4].Status != 200 {
		t.Fatalf("requests recorded: %+v", reqs)
	}
}

func TestRefuseClosesThePortUntilReported(t *testing.T) {
	s, err := Start(OK(), Do(Refuse), Do(Refuse))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := get(t, s.URL()); err != nil {
		t.Fatalf("step 1: %v", err)
	}
	for i := range 2 {
		if !s.Refusing() {
			t.Fatalf("refusal %d: the server is listening", i+1)
		}
		_, err := net.Dial("tcp", s.Addr())
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("refusal %d: dial error %v, want connection refused", i+1, err)
		}
		if runtime.GOOS == "linux" {
			if ln, err := net.Listen("tcp", s.Addr()); err == nil {
				ln.Close()
				t.Fatalf("refusal %d: another listener took the refusing server's port", i+1)
			}
		}
		if err := s.Refused(); err != nil {
			t.Fatal(err)
		}
	}
	if s.Refusing() {
		t.Fatalf("still refusing after the script's refusals")
	}
	if resp, err := get(t, s.URL()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the refusals: %v %v", resp, err)
	}
}

func TestHangHoldsUntilTheClientGivesUp(t *testing.T) {
	s, err := Start(Do(Hang))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &http.Client{Timeout: 100 * time.Millisecond}
	_, err = c.Get(s.URL())
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("hang: %v, want a client timeout", err)
	}
	if s.Effects() != 1 {
		t.Fatalf("effects %d, want 1", s.Effects())
	}
}
