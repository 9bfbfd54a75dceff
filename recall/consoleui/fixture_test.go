package consoleui_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/consoleui"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// The demo's recordings (go run ./examples/archive): four of six seconds,
// and a copy of the first, made once for the package's tests, with the
// cache of their audio proxies.
var (
	recordingsOnce sync.Once
	recordingsDir  string
	cacheDir       string
	recordingsErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if recordingsDir != "" {
		os.RemoveAll(filepath.Dir(recordingsDir))
	}
	os.Exit(code)
}

func recordings(t testing.TB) (dir, cache string) {
	t.Helper()
	recordingsOnce.Do(func() {
		// Until the last step, so that a test that fails making them
		// leaves the next ones an error, not half the recordings.
		recordingsErr = errors.New("the recordings could not be made")
		var root string
		if root, recordingsErr = os.MkdirTemp("", "recall-console-test-"); recordingsErr != nil {
			return
		}
		recordingsDir, cacheDir = filepath.Join(root, "recordings"), filepath.Join(root, "cache")
		os.MkdirAll(recordingsDir, 0o755)
		for i := range 4 {
			path := filepath.Join(recordingsDir, fmt.Sprintf("interview %d.mp3", i+1))
			testkit.Tone(t, path, 220+110*i, time.Duration(3+i)*time.Second, "-af", "apad=whole_dur=6", "-t", "6")
		}
		data, _ := os.ReadFile(filepath.Join(recordingsDir, "interview 1.mp3"))
		recordingsErr = os.WriteFile(filepath.Join(recordingsDir, "interview 1 (copy).mp3"), data, 0o644)
	})
	if recordingsErr != nil {
		t.Fatal(recordingsErr)
	}
	return recordingsDir, cacheDir
}

// archive is the demo's archive after its first run, two requests
// ambiguous (one charged, its answer lost; one answered 503, not charged),
// its sandbox provider, and the console over it.
type archive struct {
	a        *recall.Archive
	sandbox  *sandbox.Server
	provider string
	console  *httptest.Server
	registry *prometheus.Registry
	// charged is the ambiguous request the sandbox charged for, and
	// refused the one it did not.
	charged, refused string
	// later moves the database's clock ahead, in nanoseconds.
	later *atomic.Int64
}

type archiveOptions struct {
	token string // the console's token
}

const batch = "interviews"

func newArchive(t testing.TB, o archiveOptions) *archive {
	t.Helper()
	dir, _ := recordings(t)
	ctx := context.Background()
	var err error
	x := &archive{later: new(atomic.Int64)}
	// The database's clock: moved past the first run's leases, as when a
	// person settles its requests later.
	later := x.later
	clock := func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	if x.a, err = recall.Open(ctx, filepath.Join(t.TempDir(), "recall.db"), recall.Options{Clock: clock}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.a.Close() })
	if _, err := x.a.Add(ctx, batch, []string{dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, _ := sandbox.ParsePlan("2:charge-drop,3:503")
	x.sandbox = sandbox.New(sandbox.Options{Plan: plan})
	srv := httptest.NewServer(x.sandbox)
	t.Cleanup(func() {
		x.sandbox.Close()
		srv.Close()
	})
	x.provider = srv.URL
	if rep := x.run(t); rep.Ambiguous != 2 || rep.Done != 2 {
		t.Fatalf("the demo's first run: %+v", rep)
	}
	later.Store(int64(time.Hour))
	items, err := x.a.Ambiguous(ctx, batch)
	if err != nil || len(items) != 2 {
		t.Fatalf("ambiguous: %+v, %v", items, err)
	}
	for _, it := range items {
		if x.chargedFor(it.Key) != nil {
			x.charged = it.Key
		} else {
			x.refused = it.Key
		}
	}
	if x.charged == "" || x.refused == "" {
		t.Fatalf("the sandbox's charges do not tell the two requests apart: %+v", x.sandbox.Charges())
	}
	x.registry = prometheus.NewRegistry()
	ui, err := consoleui.New(consoleui.Options{Archive: x.a, Pricing: recall.Pricing{Provider: "openai", Model: "whisper-1", PerMinute: 6000}, Registry: x.registry})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Options{Product: "recall", Token: o.token, TokenEnv: "RECALL_TOKEN", User: "ann",
		Journal: ui.Journal(), Work: ui.Work(), Pages: ui.Pages(), Registry: x.registry})
	if err != nil {
		t.Fatal(err)
	}
	x.console = httptest.NewServer(c.Handler())
	t.Cleanup(x.console.Close)
	return x
}

// run runs the batch through the sandbox's server as a provider of real
// money (openai), as recall-archive run does: the sandbox's own play money
// would meet no budget.
func (x *archive) run(t testing.TB) recall.RunReport {
	t.Helper()
	p, err := provider.New(provider.Options{Name: "openai", BaseURL: x.provider, Model: "whisper-1", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, cache := recordings(t)
	rep, err := x.a.Run(context.Background(), batch, recall.RunOptions{Provider: p, PricePerMinute: 6000, Workers: 2, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// chargedFor returns the sandbox's charge for the request key, if it
// charged: openai's requests carry no key, and the sandbox tags them by
// their file, named by the content (one chunk each here).
func (x *archive) chargedFor(key string) *sandbox.Charge {
	parts := strings.Split(key, "/")
	for _, c := range x.sandbox.Charges() {
		if c.Tag == key || len(parts) > 1 && strings.HasPrefix(c.Tag, "file:"+parts[1]+".") {
			return &c
		}
	}
	return nil
}

// state returns the journal state of the request key.
func (x *archive) state(t testing.TB, key string) journal.State {
	t.Helper()
	op, err := x.a.Store().Operation(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return op.State
}

type page struct {
	status   int
	location string
	body     string
	// refresh is the Refresh header: the seconds after which a browser
	// reads the page again.
	refresh string
}

// get asks the console as a browser would.
func (x *archive) get(t testing.TB, path string) page {
	t.Helper()
	req, _ := http.NewRequest("GET", x.console.URL+path, nil)
	return x.do(t, req)
}

// post sends a form as a browser on the console's own page would; site
// is the Sec-Fetch-Site it says ("same-origin").
func (x *archive) post(t testing.TB, path, site string, form url.Values) page {
	t.Helper()
	req, _ := http.NewRequest("POST", x.console.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", site)
	return x.do(t, req)
}

// settle sends the settle form, with a transcript file if name is not
// empty.
func (x *archive) settle(t testing.TB, key, outcome, note, name string, transcript []byte) page {
	t.Helper()
	var body strings.Builder
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"key": key, "outcome": outcome, "note": note} {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("transcript", name)
	fw.Write(transcript)
	mw.Close()
	req, _ := http.NewRequest("POST", x.console.URL+"/settle", strings.NewReader(body.String()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return x.do(t, req)
}

func (x *archive) do(t testing.TB, req *http.Request) page {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header.Get("Location"), string(b), resp.Header.Get("Refresh")}
}
