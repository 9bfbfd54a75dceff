package consoleui

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// scrapeTimeout bounds the reading of the archive for one scrape.
const scrapeTimeout = 10 * time.Second

// archiveCollector reads the archive's batches when scraped, so that the
// numbers are the database's, whichever process runs the batches.
type archiveCollector struct {
	s                                  *store.Store
	items, files                       *prometheus.Desc
	budget, held, heldAmbiguous, spent *prometheus.Desc
	byProvider                         *prometheus.Desc
}

func newArchiveCollector(s *store.Store) *archiveCollector {
	batch := []string{"batch"}
	return &archiveCollector{s: s,
		items: prometheus.NewDesc("recall_items", "The batch's recordings, by how far their transcription got (done, waiting, sending, failed, ambiguous, ...).",
			[]string{"batch", "state"}, nil),
		files: prometheus.NewDesc("recall_files", "The batch's files, by state: added, failed (before any payment) or rejected (not media).",
			[]string{"batch", "state"}, nil),
		budget:        prometheus.NewDesc("recall_budget_dollars", "The most the batch may spend, over all its runs; absent without a budget.", batch, nil),
		held:          prometheus.NewDesc("recall_held_dollars", "Money held for the batch's requests not yet settled.", batch, nil),
		heldAmbiguous: prometheus.NewDesc("recall_held_ambiguous_dollars", "The part of the money held that ambiguous requests hold: it may have been spent.", batch, nil),
		spent:         prometheus.NewDesc("recall_spent_dollars", "What the batch's applied requests cost, in real money: the sandbox's play money is not in it.", batch, nil),
		byProvider: prometheus.NewDesc("recall_provider_spent_dollars", "What the batch's applied requests cost, per provider; play=\"true\" is the sandbox's play money, counted in no budget.",
			[]string{"batch", "provider", "play"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *archiveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.items, c.files, c.budget, c.held, c.heldAmbiguous, c.spent, c.byProvider} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *archiveCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	batches, err := c.s.Batches(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.items, err)
		return
	}
	for _, b := range batches {
		if err := c.batch(ctx, ch, b.Name); err != nil {
			ch <- prometheus.NewInvalidMetric(c.items, err)
			return
		}
	}
}

// batch sends the metrics of one batch.
func (c *archiveCollector) batch(ctx context.Context, ch chan<- prometheus.Metric, name string) error {
	progress, err := c.s.Progress(ctx, name)
	if err != nil {
		return err
	}
	for _, t := range tallies(progress) {
		ch <- prometheus.MustNewConstMetric(c.items, prometheus.GaugeValue, float64(t.Count), name, string(t.State))
	}
	files, err := c.s.FileCounts(ctx, name)
	if err != nil {
		return err
	}
	for _, st := range []string{recording.Added, recording.Failed, recording.Rejected} {
		ch <- prometheus.MustNewConstMetric(c.files, prometheus.GaugeValue, float64(files[st]), name, st)
	}
	m, err := c.s.Money(ctx, name)
	if err != nil {
		return err
	}
	if m.Budget > 0 {
		ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, dollarsOf(m.Budget), name)
	}
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, dollarsOf(m.Held), name)
	ch <- prometheus.MustNewConstMetric(c.heldAmbiguous, prometheus.GaugeValue, dollarsOf(m.HeldAmbiguous), name)
	ch <- prometheus.MustNewConstMetric(c.spent, prometheus.GaugeValue, dollarsOf(m.Spent), name)
	for _, p := range m.Providers {
		ch <- prometheus.MustNewConstMetric(c.byProvider, prometheus.GaugeValue, dollarsOf(p.Spent), name, p.Provider, strconv.FormatBool(p.Play))
	}
	return nil
}

func dollarsOf(a ledger.Amount) float64 { return float64(a) / 1e6 }

// latencyCollector is the provider's latency as the journal's audit log
// records it: for each paid request, the time from the durable commit
// that it is being sent to the record of how it ended, by outcome. A
// request that a recovery declared ambiguous, after its run was killed,
// has no answer to time and is left out. The log is read when scraped,
// from where the last scrape stopped, so the histogram counts every
// request of the archive, sent by whichever process.
type latencyCollector struct {
	j *journal.Journal
	h *prometheus.HistogramVec

	mu   sync.Mutex
	last int64                // the newest entry read
	sent map[string]time.Time // requests sent and not yet ended, as read
}

func newLatencyCollector(j *journal.Journal) *latencyCollector {
	return &latencyCollector{j: j, sent: map[string]time.Time{},
		h: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "recall_provider_latency_seconds",
			Help:    "Time from a paid request's commit as sent to the record of its answer, by outcome (applied, not_applied, failed_safe, ambiguous), from the journal's audit log.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}}, []string{"outcome"})}
}

// Describe implements prometheus.Collector.
func (c *latencyCollector) Describe(ch chan<- *prometheus.Desc) { c.h.Describe(ch) }

// Collect implements prometheus.Collector.
func (c *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.catchUp(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewDesc("recall_provider_latency_seconds", "", nil, nil), err)
		return
	}
	c.h.Collect(ch)
}

// auditPage is how many entries of the log one read takes.
const auditPage = 1000

// catchUp reads the entries of the audit log newer than the last read,
// oldest first, and observes each answer.
func (c *latencyCollector) catchUp(ctx context.Context) error {
	var fresh []journal.Entry
	for before := int64(0); ; {
		page, err := c.j.Audit(ctx, journal.AuditFilter{Kind: store.Kind, Before: before, Limit: auditPage})
		if err != nil {
			return err
		}
		done := len(page) < auditPage
		for _, e := range page {
			if e.ID <= c.last {
				done = true
				break
			}
			fresh = append(fresh, e)
		}
		if done {
			break
		}
		before = page[len(page)-1].ID
	}
	slices.Reverse(fresh)
	for _, e := range fresh {
		c.observe(e)
		c.last = e.ID
	}
	return nil
}

// observe reads one entry of the audit log.
func (c *latencyCollector) observe(e journal.Entry) {
	switch {
	case e.To == journal.Sending:
		c.sent[e.Key] = e.At
	case e.From == journal.Sending:
		at, ok := c.sent[e.Key]
		delete(c.sent, e.Key)
		if ok && e.Actor != "recovery" {
			c.h.WithLabelValues(string(e.To)).Observe(e.At.Sub(at).Seconds())
		}
	}
}
