package recall_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// The fault tests freeze one run's worker at a named point of a request
// (recall.WithPause: its renewals stop too, as in a process that is
// stopped), while another run on the same database (another archive,
// another journal: another process) goes on, and count the charges at a
// sandbox on loopback. Every request gets faultTimeout and is sent under
// faultLease, on the real clock: these tests do not run in parallel with
// the others, whose load could delay a run past a lease, but the cases of
// each, which mostly wait out leases, run in parallel with each other.
const (
	faultTimeout = 2 * time.Second
	faultLease   = 2100 * time.Millisecond
)

// faults is one batch, "b", of one recording on one backend, and the
// sandbox that charges for it.
type faults struct {
	t       *testing.T
	dsn     string
	cache   string
	sandbox *sandbox.Server
	url     string
}

func newFaults(t *testing.T, b testdb.Backend, sb sandbox.Options) *faults {
	t.Helper()
	f := &faults{t: t, dsn: b.DSN(t), cache: t.TempDir()}
	dir := t.TempDir()
	testkit.Tone(t, filepath.Join(dir, "a.mp3"), 300, 2*time.Second, "-ac", "1")
	f.sandbox = sandbox.New(sb)
	srv := httptest.NewServer(f.sandbox)
	t.Cleanup(func() {
		f.sandbox.Close()
		srv.Close()
	})
	f.url = srv.URL
	if _, err := f.open(recall.Options{}).Add(context.Background(), "b", []string{dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// open opens the archive as another process would.
func (f *faults) open(opts recall.Options) *recall.Archive {
	f.t.Helper()
	return f.openDSN(f.dsn, opts)
}

func (f *faults) openDSN(dsn string, opts recall.Options) *recall.Archive {
	f.t.Helper()
	opts.SendLease, opts.Lease = faultLease, faultLease
	a, err := recall.Open(context.Background(), dsn, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { a.Close() })
	return a
}

func (f *faults) provider() *provider.Provider {
	p, err := provider.New(provider.Options{Name: "sandbox", BaseURL: f.url, Model: "whisper-1", Timeout: faultTimeout})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *faults) options() recall.RunOptions {
	return recall.RunOptions{Provider: f.provider(), PricePerMinute: 6000, Workers: 1, CacheDir: f.cache}
}

// frozen runs the batch in a through the point, where it freezes until
// the returned function is called; that function waits for the run and
// returns its report and error.
func (f *faults) frozen(a *recall.Archive, point string) (key string, thaw func() (recall.RunReport, error)) {
	f.t.Helper()
	at := make(chan string, 1)
	release := make(chan struct{})
	var once sync.Once
	opts := recall.WithPause(f.options(), func(p, k string, stop func()) {
		if p == point {
			once.Do(func() {
				stop()
				at <- k
				<-release
			})
		}
	})
	type result struct {
		rep recall.RunReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := a.Run(context.Background(), "b", opts)
		done <- result{rep, err}
	}()
	select {
	case key = <-at:
	case r := <-done:
		f.t.Fatalf("the run ended before it reached %q: %+v, %v", point, r.rep, r.err)
	case <-time.After(60 * time.Second):
		f.t.Fatalf("the run never reached %q", point)
	}
	return key, func() (recall.RunReport, error) {
		close(release)
		r := <-done
		return r.rep, r.err
	}
}

// charges counts the sandbox's charges for key.
func (f *faults) charges(key string) int {
	n := 0
	for _, c := range f.sandbox.Charges() {
		if c.Tag == key {
			n++
		}
	}
	return n
}

// done checks that the batch's one recording is transcribed, charged
// once, and paid for once, with nothing held.
func (f *faults) done(a *recall.Archive, key string) {
	f.t.Helper()
	ctx := context.Background()
	if n := f.charges(key); n != 1 {
		f.t.Errorf("%s was charged %d times", key, n)
	}
	ops, err := a.Operations(ctx, "b")
	if err != nil || len(ops) != 1 || ops[0].State != journal.Applied {
		f.t.Fatalf("the batch's requests: %+v, %v; want one, applied", ops, err)
	}
	st, err := a.Status(ctx, "b")
	if err != nil || st.Transcription["done"] != 1 {
		f.t.Errorf("status: %+v, %v; want the recording done", st.Transcription, err)
	}
	m, _ := a.Money(ctx, "b")
	// The sandbox's money is play money, apart from the budget's.
	if m.Held+m.Play.Held != 0 || m.Spent+m.Play.Spent != f.sandbox.Charges()[0].Amount {
		f.t.Errorf("money %+v; want the one charge of %d spent, nothing held", m, f.sandbox.Charges()[0].Amount)
	}
}

// TestFrozenRunSendsNothingOnceItsLeaseIsGone: a run frozen after its
// sending commit, or with its connection ready and no byte written, for
// longer than the request's lease, never starts writing when it wakes:
// the request, declared ambiguous by the next run, found uncharged by
// reconcile, resolved as not applied and retried, is charged once.
func TestFrozenRunSendsNothingOnceItsLeaseIsGone(t *testing.T) {
	for _, b := range testdb.Backends() {
		for _, point := range []string{"sent", "connected"} {
			t.Run(b.Name+"/"+point, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				f := newFaults(t, b, sandbox.Options{})
				frozen, other := f.open(recall.Options{}), f.open(recall.Options{})
				key, thaw := f.frozen(frozen, point)
				time.Sleep(faultLease + 200*time.Millisecond)
				if rep, err := other.Run(ctx, "b", f.options()); err != nil || rep.Ambiguous != 1 {
					t.Fatalf("the next run while the first is frozen: %+v, %v; want the request ambiguous", rep, err)
				}
				res, err := other.Reconcile(ctx, "b", f.provider())
				if err != nil || len(res) != 1 || res[0].State != journal.NotApplied {
					t.Fatalf("reconcile: %+v, %v; want not applied: the sandbox has no charge", res, err)
				}
				if rr, err := other.RetryFailed(ctx, "b"); err != nil || rr.Requests != 1 {
					t.Fatalf("retry-failed: %+v, %v", rr, err)
				}
				if rep, err := other.Run(ctx, "b", f.options()); err != nil || rep.Done != 1 {
					t.Fatalf("the run after the retry: %+v, %v", rep, err)
				}
				rep, err := thaw()
				if err != nil {
					t.Fatal(err)
				}
				if rep.Paid != 0 {
					t.Errorf("the frozen run paid for %d requests once it woke", rep.Paid)
				}
				f.done(other, key)
			})
		}
	}
}

// TestFrozenRunsLateAnswerIsKept: a run frozen after its answer, for
// longer than the request's lease, finds its request declared ambiguous
// when it wakes: the answer is kept, and the request applied with its
// transcript, by the run's own record, which says how.
func TestFrozenRunsLateAnswerIsKept(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFaults(t, b, sandbox.Options{})
			frozen, other := f.open(recall.Options{}), f.open(recall.Options{})
			key, thaw := f.frozen(frozen, "answered")
			time.Sleep(faultLease + 200*time.Millisecond)
			if rep, err := other.Run(ctx, "b", f.options()); err != nil || rep.Ambiguous != 1 {
				t.Fatalf("the next run while the first is frozen: %+v, %v; want the request ambiguous", rep, err)
			}
			rep, err := thaw()
			if err != nil || rep.Paid != 1 || rep.Done != 1 {
				t.Fatalf("the frozen run, woken: %+v, %v; want its answer recorded", rep, err)
			}
			f.done(other, key)
			ops, _ := frozen.Operations(ctx, "b")
			if res := ops[0].Resolution; res == nil || !strings.Contains(res.Note, "answer arrived after") {
				t.Errorf("the request's resolution: %+v; want the late answer", res)
			}
		})
	}
}

// TestSkewedClockChangesNothing: a run whose own clock is two minutes
// ahead or behind the others' neither takes nor loses a lease by it: a
// request answered while another run recovers is recorded as applied,
// with its transcript, and charged once.
func TestSkewedClockChangesNothing(t *testing.T) {
	for _, b := range testdb.Backends() {
		for _, skew := range []time.Duration{120 * time.Second, -120 * time.Second} {
			t.Run(b.Name+"/"+skew.String(), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				f := newFaults(t, b, sandbox.Options{})
				sender := f.open(recall.Options{Now: func() time.Time { return time.Now().Add(skew) }})
				recovering := f.open(recall.Options{Now: func() time.Time { return time.Now().Add(-skew) }})
				key, thaw := f.frozen(sender, "answered")
				if rep, err := recovering.Run(ctx, "b", f.options()); err != nil || rep.Ambiguous != 0 {
					t.Fatalf("a run with a clock %s from the sender's, while it records: %+v, %v; want nothing ambiguous", -2*skew, rep, err)
				}
				if rep, err := thaw(); err != nil || rep.Paid != 1 {
					t.Fatalf("the sender: %+v, %v", rep, err)
				}
				f.done(recovering, key)
			})
		}
	}
}

// TestFrozenClaimIsTakenOverOnce: a run frozen after its claim, past the
// claim's lease, loses the request to the next run, which has the same
// worker name (runs in containers of their own are both host:1); woken
// while that run's request is in flight, it sends nothing and records
// nothing over it: one charge, applied.
func TestFrozenClaimIsTakenOverOnce(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFaults(t, b, sandbox.Options{Latency: time.Second})
			frozen, other := f.open(recall.Options{}), f.open(recall.Options{})
			key, thaw := f.frozen(frozen, "claimed")
			time.Sleep(faultLease + 200*time.Millisecond)
			done := make(chan recall.RunReport, 1)
			go func() {
				rep, err := other.Run(ctx, "b", f.options())
				if err != nil {
					t.Error(err)
				}
				done <- rep
			}()
			for f.sandbox.Requests() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			rep, err := thaw() // while the other's request is in flight
			if err != nil || rep.Paid != 0 {
				t.Fatalf("the frozen run, woken: %+v, %v", rep, err)
			}
			if rep := <-done; rep.Done != 1 || rep.Paid != 1 {
				t.Fatalf("the run that took the request over: %+v", rep)
			}
			if rr, _ := other.RetryFailed(ctx, "b"); rr.Requests != 0 {
				t.Fatalf("retry-failed found %d requests to send again", rr.Requests)
			}
			f.done(other, key)
		})
	}
}

// TestDatabaseDownWhileAnAnswerIsRecorded: the connections to PostgreSQL
// break, and new ones are refused, as during a restart, just as a paid
// answer is to be recorded. Down briefly, the record is tried again and
// made; down past the run, the answer is kept on disk and the next run
// records it. Either way it is charged once and transcribed.
func TestDatabaseDownWhileAnAnswerIsRecorded(t *testing.T) {
	for _, outage := range []string{"brief", "past the run"} {
		t.Run(outage, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFaults(t, testdb.Backend{Name: "postgres", DSN: testdb.Postgres}, sandbox.Options{})
			proxy := newTCPProxy(t, f.dsn)
			a := f.openDSN(proxy.dsn, recall.Options{})
			key, thaw := f.frozen(a, "answered")
			proxy.down()
			if outage == "brief" {
				go func() {
					time.Sleep(time.Second)
					proxy.up()
				}()
			}
			rep, err := thaw()
			if outage == "brief" {
				if err != nil || rep.Paid != 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), "and then succeeded") {
					t.Fatalf("the run: %+v, %v; want its answer recorded after the database came back, and a note of it", rep, err)
				}
				f.done(a, key)
				return
			}
			if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0].Error, "the next run records it") {
				t.Fatalf("the run while the database is down: %+v, %v; want a problem that says the answer is kept", rep, err)
			}
			proxy.up()
			next := f.open(recall.Options{})
			rep, err = next.Run(ctx, "b", f.options())
			if err != nil || !strings.Contains(strings.Join(rep.Notes, "\n"), "kept on disk") {
				t.Fatalf("the next run: %+v, %v; want the kept answer recorded", rep, err)
			}
			f.done(next, key)
		})
	}
}

// tcpProxy stands between the tests' runs and PostgreSQL, and goes down
// (every connection broken, new ones refused) and up again.
type tcpProxy struct {
	t      *testing.T
	dsn    string
	target string
	ln     net.Listener
	mu     sync.Mutex
	isDown bool
	conns  []net.Conn
}

func newTCPProxy(t *testing.T, dsn string) *tcpProxy {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: u.Host, ln: ln}
	u.Host = ln.Addr().String()
	p.dsn = u.String()
	t.Cleanup(func() {
		ln.Close()
		p.down()
	})
	go p.serve()
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.isDown {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go func() { io.Copy(c, s); c.Close() }()
	}
}

// down breaks every connection and refuses new ones.
func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// up takes connections again.
func (p *tcpProxy) up() {
	p.mu.Lock()
	p.isDown = false
	p.mu.Unlock()
}
