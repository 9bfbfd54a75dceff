package toolgate

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// Metrics count what the calls of tools do, for Prometheus: calls by tool,
// risk class and outcome, retries, and deadlines that ran out. Register
// them with a registry of the server's own ([NewMetrics]).
type Metrics struct {
	calls     *prometheus.CounterVec
	retries   *prometheus.CounterVec
	deadlines *prometheus.CounterVec
}

// NewMetrics returns toolgate's call metrics, registered with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolgate_calls_total",
			Help: "Tool calls, by tool, risk class and outcome: applied, not_applied, ambiguous or failed_safe once sent or tried; " +
				"refused (the guard held it back, or a person did not accept it), replayed (an identical call was applied, its answer given again), invalid or not_recorded when nothing was sent."},
			[]string{"tool", "class", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolgate_retries_total",
			Help: "Attempts of tool calls made again by the transport, each proven safe to repeat, by tool."}, []string{"tool"}),
		deadlines: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolgate_deadline_exhausted_total",
			Help: "Tool calls that ran out of their deadline before an answer, by tool."}, []string{"tool"}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.retries, m.deadlines} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Instrument has the caller count its calls in m and log each in log;
// either may be nil. Call it before the first call. The retries are
// counted when the caller made its own client (NewCaller's client is nil).
func (c *Caller) Instrument(m *Metrics, log *slog.Logger) {
	c.metrics, c.log = m, log
}

// callStats is what the transport's attempts of one call did.
type callStats struct {
	retries  int
	deadline bool
}

// statsKey keys a call's *callStats in its request's context.
type statsKey struct{}

// observe counts an attempt of a call in the call's stats; the transport
// calls it in the goroutine that sends the call.
func observe(a transport.Attempt) {
	st, _ := a.Request.Context().Value(statsKey{}).(*callStats)
	if st == nil {
		return
	}
	if a.Decision.Retry {
		st.retries++
	}
	if a.Decision.Reason == retry.StopDeadline {
		st.deadline = true
	}
}

// observed counts and logs a call of t that did what info says, in d.
func (c *Caller) observed(t *Tool, info callInfo, d time.Duration) {
	if m := c.metrics; m != nil {
		m.calls.WithLabelValues(t.Name, t.Risk.Class.String(), info.outcome).Inc()
		if info.stats.retries > 0 {
			m.retries.WithLabelValues(t.Name).Add(float64(info.stats.retries))
		}
		if info.stats.deadline {
			m.deadlines.WithLabelValues(t.Name).Inc()
		}
	}
	if c.log != nil {
		level := slog.LevelInfo
		if info.outcome == "ambiguous" {
			level = slog.LevelWarn
		}
		attrs := []any{"tool", t.Name, "class", t.Risk.Class.String(), "outcome", info.outcome, "duration", d.Round(time.Millisecond)}
		if info.key != "" {
			attrs = append(attrs, "key", info.key)
		}
		if info.stats.retries > 0 {
			attrs = append(attrs, "retries", info.stats.retries)
		}
		if info.stats.deadline {
			attrs = append(attrs, "deadline", t.Deadline.String())
		}
		if info.unrecorded != nil {
			// The call stays in flight in the journal: recovery makes it
			// ambiguous once its lease is over, and a person settles it.
			level = slog.LevelError
			attrs = append(attrs, "unrecorded", info.unrecorded.Error())
		}
		c.log.Log(context.Background(), level, "call", attrs...)
	}
}
