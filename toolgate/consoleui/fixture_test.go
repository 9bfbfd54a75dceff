package consoleui_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/consoleui"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// shopSpecPath is the example shop's document; tests change directory,
// so it is made absolute first.
var shopSpecPath = func() string {
	p, err := filepath.Abs("../../examples/shop/openapi.yaml")
	if err != nil {
		panic(err)
	}
	return p
}()

// shopConfig is the example shop's configuration as a person keeps it.
const shopConfig = `# toolgate's configuration for the example shop
defaults:
  deadline: 30s        # every call, attempts and waits included
  expose: read+write   # destructive and privileged tools stay hidden

tags:
  orders: {expose: true}

tools:
  listOrders: {retry: not_sent_only, deadline: 10s}   # the listing is billed per call
`

// shop is the example shop's API, toolgate's calls of it journaled, and
// the console over both.
type shop struct {
	api        *shopapi.API
	cat        *toolgate.Catalog
	caller     *toolgate.Caller
	j          *journal.Journal
	configPath string
	console    *httptest.Server
	registry   *prometheus.Registry
}

type shopOptions struct {
	noConfig bool   // the console is started without --config
	token    string // the console's token
	user     string // who settles on loopback; "ann" by default
}

func newShop(t testing.TB, o shopOptions) *shop {
	t.Helper()
	s := &shop{api: shopapi.New()}
	up := httptest.NewServer(s.api)
	t.Cleanup(up.Close)
	doc, err := spec.Load(shopSpecPath)
	if err != nil {
		t.Fatal(err)
	}
	// The console runs where its configuration is, as in the README, so
	// that its pages name the file as a person gave it.
	dir := t.TempDir()
	t.Chdir(dir)
	if !o.noConfig {
		s.configPath = "shop.yaml"
		if err := os.WriteFile(s.configPath, []byte(shopConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	if !o.noConfig {
		if cfg, err = config.Parse([]byte(shopConfig)); err != nil {
			t.Fatal(err)
		}
	}
	if s.cat, err = toolgate.Build(doc, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(context.Background(), filepath.Join(dir, "journal.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// A short lease on sending, so that a lost call can be settled as not
	// applied soon after (not before: its sender might still send).
	s.j = journal.New(db.JournalStore(), journal.Options{SendLease: time.Second})
	if s.caller, err = toolgate.NewCaller(s.cat, up.URL, config.Upstream{}, nil, nil, s.j); err != nil {
		t.Fatal(err)
	}
	s.registry = prometheus.NewRegistry()
	ui, err := consoleui.New(consoleui.Options{Doc: doc, SpecPath: "examples/shop/openapi.yaml", ConfigPath: s.configPath, Registry: s.registry})
	if err != nil {
		t.Fatal(err)
	}
	if o.user == "" {
		o.user = "ann"
	}
	c, err := console.New(console.Options{Product: "toolgate", Token: o.token, TokenEnv: toolgate.TokenEnv, User: o.user,
		Journal: s.j, Work: consoleui.Work(), Pages: ui.Pages(), Registry: s.registry})
	if err != nil {
		t.Fatal(err)
	}
	s.console = httptest.NewServer(c.Handler())
	t.Cleanup(s.console.Close)
	return s
}

// call calls a tool of the shop through toolgate.
func (s *shop) call(t testing.TB, name, args string) toolgate.Result {
	t.Helper()
	tool := s.cat.Callable(name)
	if tool == nil {
		t.Fatalf("%s is not exposed", name)
	}
	return s.caller.Call(context.Background(), tool, json.RawMessage(args), nil)
}

// lostB7 is the call of the example whose answer is lost.
const lostB7 = `{"body":{"sku":"B7","quantity":1}}`

// loseAnOrder places an order whose answer is lost: an ambiguous call,
// whose key it returns.
func (s *shop) loseAnOrder(t testing.TB) string {
	t.Helper()
	s.call(t, "createOrder", `{"body":{"sku":"A1","quantity":2}}`)
	s.api.LoseAnswers(1)
	if r := s.call(t, "createOrder", lostB7); !strings.Contains(r.Text, "OUTCOME UNKNOWN") {
		t.Fatalf("the lost order: %+v", r)
	}
	if r := s.call(t, "createOrder", lostB7); !strings.HasPrefix(r.Text, "REFUSED") {
		t.Fatalf("the same call again: %+v", r)
	}
	ops, err := s.j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind, States: []journal.State{journal.Ambiguous}})
	if err != nil || len(ops) != 1 {
		t.Fatalf("ambiguous calls: %v, %v", ops, err)
	}
	time.Sleep(time.Until(ops[0].LeaseExpires) + 100*time.Millisecond)
	return ops[0].Key
}

func (s *shop) configText(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(s.configPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
