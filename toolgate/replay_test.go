package toolgate_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// TestIdenticalCallReplayed: a call identical to one applied within the
// tool's replay window gets that call's answer, marked as a replay, and
// nothing is sent; a window of 0 sends it again.
func TestIdenticalCallReplayed(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		requests     int32
	}{
		{"the default window", "", 1},
		{"replay off for the tool", "tools:\n  createOrder: {replay: 0}\n", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "j.db"), sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var requests atomic.Int32
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := requests.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				fmt.Fprintf(w, `{"id": "o%d", "sku": "A1", "quantity": 2}`, n)
			}))
			defer up.Close()
			cat := shop(t, tt.config)
			c, err := toolgate.NewCaller(cat, up.URL, config.Upstream{}, nil, nil, journal.New(db.JournalStore(), journal.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			args := []byte(`{"body": {"sku": "A1", "quantity": 2}}`)
			if res := c.Call(ctx, cat.Callable("createOrder"), args, nil); res.IsError || res.Structured["id"] != "o1" {
				t.Fatalf("the first call: %+v", res)
			}
			res := c.Call(ctx, cat.Callable("createOrder"), args, nil)
			if n := requests.Load(); n != tt.requests {
				t.Fatalf("the upstream got %d requests, want %d", n, tt.requests)
			}
			replayed := strings.HasPrefix(res.Text, "REPLAYED: this call was already applied at ")
			if res.IsError || replayed != (tt.requests == 1) {
				t.Fatalf("the identical call: %+v", res)
			}
			if replayed && (res.Structured["id"] != "o1" || !strings.Contains(res.Text, `"id": "o1"`) || res.Meta[toolgate.ReplayedMeta] == nil) {
				t.Errorf("the replay does not give the first call's answer: %+v", res)
			}
		})
	}
}

// TestDocsReplayed: docs/toolgate.md shows what the agent reads when the
// example shop's order is re-issued after it was applied. The time and
// the journal's key differ from run to run: they are written as a fixed
// time and key.
func TestDocsReplayed(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "j.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"o1","sku":"R1","quantity":2}`)
	}))
	defer up.Close()
	cat := shop(t, "")
	c, err := toolgate.NewCaller(cat, up.URL, config.Upstream{}, nil, nil, journal.New(db.JournalStore(), journal.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	args := `{"body":{"quantity":2,"sku":"R1"}}`
	c.Call(ctx, cat.Callable("createOrder"), []byte(args), nil)
	res := c.Call(ctx, cat.Callable("createOrder"), []byte(args), nil)
	text := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).ReplaceAllString(res.Text, "2026-12-02T14:48:36Z")
	text = regexp.MustCompile(`toolgate/createOrder/[0-9a-z]+/[0-9a-z]+`).ReplaceAllString(text, "toolgate/createOrder/4c1f0e9d2a7b55e0c3d1a9f2/k3x9q2m7vd")
	lines := []string{"> createOrder " + args}
	for _, l := range strings.Split(text, "\n") {
		if l != "" {
			l = "  " + l
		}
		lines = append(lines, l)
	}
	doccheck.Transcript(t, "toolgate-replayed", strings.Join(lines, "\n"))
}
