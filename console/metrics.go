package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/internal/version"
	"github.com/rubicon-go/rubicon/journal"
)

// metrics are the console's own.
type metrics struct {
	requests *prometheus.CounterVec
	settled  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, product string) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: product + "_console_requests_total",
			Help: "Requests the console answered, by route and status."}, []string{"route", "code"}),
		settled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: product + "_console_settled_total",
			Help: "Ambiguous operations a person settled through the console, by outcome."}, []string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.settled, BuildInfo(product)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// counted counts the requests h answers under route.
func (s *Server) counted(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
	})
}

// ambiguousCollector counts a journal's ambiguous operations when
// scraped, so that every process on the journal reports the same number.
type ambiguousCollector struct {
	j    *journal.Journal
	kind string
	desc *prometheus.Desc
}

// NewAmbiguousCollector returns a collector of the gauge name: the number
// of ambiguous operations of kind in j, read from the journal each time
// it is scraped.
func NewAmbiguousCollector(j *journal.Journal, kind, name, help string) prometheus.Collector {
	return &ambiguousCollector{j: j, kind: kind, desc: prometheus.NewDesc(name, help, nil, nil)}
}

// Describe implements prometheus.Collector.
func (c *ambiguousCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *ambiguousCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ops, err := c.j.List(ctx, journal.Filter{Kind: c.kind, States: []journal.State{journal.Ambiguous}})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(len(ops)))
}

// BuildInfo returns the gauge PRODUCT_build_info, always 1, whose labels
// say which build is running: version, commit, whether the tree was
// modified, and the Go version (what `PRODUCT version` prints).
func BuildInfo(product string) prometheus.Collector {
	i := version.Get()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: strings.ReplaceAll(product, "-", "_") + "_build_info",
		Help:        "The build that is running, in its labels; always 1.",
		ConstLabels: prometheus.Labels{"version": i.Version, "commit": i.Commit, "modified": strconv.FormatBool(i.Modified), "go_version": i.GoVersion}})
	g.Set(1)
	return g
}
