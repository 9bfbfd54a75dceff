package retry

import (
	"strings"
	"testing"
	"time"
)

func TestNewRejectsInvalidFields(t *testing.T) {
	tests := []struct {
		field  string
		change func(*Config)
	}{
		{"MaxAttempts", func(c *Config) { c.MaxAttempts = 0 }},
		{"MaxAttempts", func(c *Config) { c.MaxAttempts = -3 }},
		{"BaseDelay", func(c *Config) { c.BaseDelay = 0 }},
		{"BaseDelay", func(c *Config) { c.BaseDelay = -time.Second }},
		{"MaxDelay", func(c *Config) { c.MaxDelay = c.BaseDelay / 2 }},
		{"MaxRetryAfter", func(c *Config) { c.MaxRetryAfter = -1 }},
		{"Deadline", func(c *Config) { c.Deadline = -time.Millisecond }},
		{"AttemptTimeout", func(c *Config) { c.AttemptTimeout = -time.Minute }},
		{"RetryStatuses", func(c *Config) { c.RetryStatuses = []int{503, 200} }},
		{"NotProcessedStatuses", func(c *Config) { c.NotProcessedStatuses = []int{600} }},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.change(&cfg)
		p, err := New(cfg)
		if err == nil {
			t.Errorf("New accepted an invalid %s: %+v", tt.field, cfg)
			continue
		}
		if p != nil {
			t.Errorf("New returned a policy with error %v", err)
		}
		if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("error %q does not name the field %s", err, tt.field)
		}
	}
}

func TestNewAcceptsDefaultsAndCopiesSlices(t *testing.T) {
	cfg := DefaultConfig()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New(DefaultConfig()): %v", err)
	}
	cfg.RetryStatuses[0] = 500 // must not reach the policy
	if p.MayRetryStatus(500) || !p.MayRetryStatus(408) {
		t.Errorf("policy shares its status slice with the caller's config")
	}
	got := p.Config()
	got.RetryStatuses[0] = 599
	if p.MayRetryStatus(599) {
		t.Errorf("Config() exposes the policy's own slice")
	}
}

func TestModeStringsRoundTrip(t *testing.T) {
	for _, m := range []Mode{ByMethod, OptedIn, NotSentOnly} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	if _, err := ParseMode("always"); err == nil || !strings.Contains(err.Error(), "always") {
		t.Errorf("ParseMode(always) error = %v, want one naming the input", err)
	}
}

func TestMustNewPanicsOnInvalidConfig(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustNew did not panic on MaxAttempts 0")
		}
	}()
	MustNew(Config{})
}
