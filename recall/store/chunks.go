package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Kind is the journal kind of a paid transcription request.
const Kind = "transcribe"

// Chunk is a piece of a content sent in one paid request to a provider's
// model; the journal operation with Key pays for it.
type Chunk struct {
	SHA256 string
	recording.Transcriber
	// Index counts from 0 to Count-1.
	Index, Count    int
	Start, Duration time.Duration
	Key             string
}

// Unknown is the provider and model of chunks planned before they were
// recorded, whose journal did not say.
const Unknown = "unknown"

// latest returns the transcriber of the content's latest plan, or who if
// it names one; zero if the content has no plan.
func (s *Store) latest(ctx context.Context, sha string, who recording.Transcriber) (recording.Transcriber, error) {
	if !who.IsZero() {
		return who, nil
	}
	ts, err := list(ctx, s, scanTranscriber,
		`SELECT provider, model, settings FROM recall_chunks WHERE sha256 = $1 ORDER BY planned_at DESC, provider, model, settings LIMIT 1`, sha)
	if err != nil || len(ts) == 0 {
		return recording.Transcriber{}, err
	}
	return ts[0], nil
}

// scanTranscriber reads a row of provider, model and settings.
func scanTranscriber(rows *sql.Rows) (t recording.Transcriber, err error) {
	err = rows.Scan(&t.Provider, &t.Model, &t.Settings)
	return t, err
}

// sameChunk joins a transcript (t) to its chunk (c).
const sameChunk = `t.sha256 = c.sha256 AND t.provider = c.provider AND t.model = c.model AND t.settings = c.settings AND t.idx = c.idx`

// Transcribers returns the transcribers that transcribed every chunk of
// the content, latest first.
func (s *Store) Transcribers(ctx context.Context, sha string) ([]recording.Transcriber, error) {
	return list(ctx, s, scanTranscriber, `SELECT c.provider, c.model, c.settings FROM recall_chunks c
		LEFT JOIN recall_transcripts t ON `+sameChunk+`
		WHERE c.sha256 = $1 GROUP BY c.provider, c.model, c.settings HAVING COUNT(*) = COUNT(t.sha256)
		ORDER BY MAX(c.planned_at) DESC, c.provider, c.model, c.settings`, sha)
}

// Others returns the transcribers but who, and but the sandbox, that
// paid for a chunk of the content, or may have (its request is applied,
// ambiguous or being sent), latest first: those a run with who would
// transcribe again.
func (s *Store) Others(ctx context.Context, sha string, who recording.Transcriber) ([]recording.Transcriber, error) {
	type planned struct {
		who recording.Transcriber
		key string
	}
	rows, err := list(ctx, s, func(rows *sql.Rows) (p planned, err error) {
		err = rows.Scan(&p.who.Provider, &p.who.Model, &p.who.Settings, &p.key)
		return p, err
	}, `SELECT provider, model, settings, op_key FROM recall_chunks WHERE sha256 = $1 AND provider <> $2
		ORDER BY planned_at DESC, provider, model, settings, idx`, sha, recording.Sandbox)
	if err != nil {
		return nil, err
	}
	chunks := make([]batchChunk, 0, len(rows))
	for _, r := range rows {
		if r.who != who {
			chunks = append(chunks, batchChunk{key: r.key})
		}
	}
	states, err := s.states(ctx, chunks)
	if err != nil {
		return nil, err
	}
	var out []recording.Transcriber
	for _, r := range rows {
		switch states[r.key] {
		case journal.Applied, journal.Ambiguous, journal.Sending:
			if r.who != who && !slices.Contains(out, r.who) {
				out = append(out, r.who)
			}
		}
	}
	return out, nil
}

// opKey is the journal key of the request that pays for chunk idx of sha
// by who: the settings, when there are any, by a digest, so that the key
// stays short and safe to type.
func opKey(sha string, idx int, who recording.Transcriber) string {
	key := fmt.Sprintf("%s/%s/%d/%s/%s", Kind, sha, idx, who.Provider, who.Model)
	if who.Settings != "" {
		sum := sha256.Sum256([]byte(who.Settings))
		key += "/" + hex.EncodeToString(sum[:6])
	}
	return key
}

// Transcript is what a provider returned for a chunk, with who made it
// and what it cost.
type Transcript struct {
	recording.Transcript
	Provider, Model string
	Cost            ledger.Amount
}

// Chunks returns the content's chunks for who (zero: its latest plan's),
// in order; none before they are planned.
func (s *Store) Chunks(ctx context.Context, sha string, who recording.Transcriber) ([]Chunk, error) {
	who, err := s.latest(ctx, sha, who)
	if err != nil || who.IsZero() {
		return nil, err
	}
	return list(ctx, s, func(rows *sql.Rows) (Chunk, error) {
		c := Chunk{SHA256: sha, Transcriber: who}
		var start, dur int64
		err := rows.Scan(&c.Index, &c.Count, &start, &dur, &c.Key)
		c.Start, c.Duration = fromMicros(start), fromMicros(dur)
		return c, err
	}, `SELECT idx, count, start_us, duration_us, op_key FROM recall_chunks WHERE sha256 = $1 AND provider = $2 AND model = $3 AND settings = $4 ORDER BY idx`,
		sha, who.Provider, who.Model, who.Settings)
}

// PlanChunks records the content's chunks for their transcriber, each with
// the pending journal operation that pays for it, in one transaction, and
// returns the chunks as stored: when another run planned them first, its
// plan stands. The chunks' keys are set here.
func (s *Store) PlanChunks(ctx context.Context, chunks []Chunk) ([]Chunk, error) {
	if len(chunks) == 0 {
		return nil, errors.New("store: a content has at least one chunk")
	}
	who := chunks[0].Transcriber
	if who.Provider == "" || who.Model == "" {
		return nil, errors.New("store: chunks are planned for a provider and a model")
	}
	now := s.now().UnixMicro()
	what := func() string { return "planning the chunks of content " + shortSHA(chunks[0].SHA256) }
	err := s.update(ctx, what, func(tx *sqlstore.Tx) error {
		for _, c := range chunks {
			c.Key = opKey(c.SHA256, c.Index, who)
			if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO recall_chunks (sha256, provider, model, settings, idx, count, start_us, duration_us, op_key, planned_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
				c.SHA256, who.Provider, who.Model, who.Settings, c.Index, c.Count, micros(c.Start), micros(c.Duration), c.Key, now); err != nil {
				return err
			}
			ev := journal.Evidence{"start_seconds": c.Start.Seconds(), "duration_seconds": c.Duration.Seconds(), "provider": who.Provider, "model": who.Model}
			if who.Settings != "" {
				ev["settings"] = who.Settings
			}
			op := journal.NewOperation{Key: c.Key, Kind: Kind, Subject: c.SHA256 + "/" + strconv.Itoa(c.Index) + "/" + who.String(), Evidence: ev}
			if _, _, err := s.j.InsertTx(ctx, tx, op); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Chunks(ctx, chunks[0].SHA256, who)
}

// Recover makes the requests whose run stopped while sending them
// ambiguous, once their lease ran out.
func (s *Store) Recover(ctx context.Context) error {
	return s.again(ctx, named("declaring the requests of killed runs ambiguous"), func() error {
		_, err := s.j.Recover(ctx)
		return err
	})
}

// Operation returns the journal operation that pays for the chunk with
// key.
func (s *Store) Operation(ctx context.Context, key string) (journal.Operation, error) {
	return s.j.Get(ctx, key)
}

// Claim gives worker the lease on the pending request key, and keeps it
// renewed, until release is called. held lasts as long as the lease is
// held: once it is done (context.Cause says why), the request must not be
// sent. release returns what went wrong with the renewals, if anything
// did (see journal.Journal.KeepLeases).
func (s *Store) Claim(ctx context.Context, key, worker string) (held context.Context, release func() error, err error) {
	if _, err := s.j.ClaimKey(ctx, key, worker); err != nil {
		return nil, nil, err
	}
	held, release = s.j.KeepLeases(context.WithoutCancel(ctx), worker, key)
	return held, release, nil
}

// Send commits that worker is sending the request key, with the hold of
// amount on the batch's budget that pays for it, in one transaction: the
// attempt that the sending transition counts names the hold. A hold the
// budget refuses leaves the request unsent, with an error wrapping
// ledger.ErrInsufficientFunds. The operation it returns has the
// request's Deadline: send it under op.Fence.
func (s *Store) Send(ctx context.Context, batch, key, worker string, amount ledger.Amount) (journal.Operation, error) {
	var op journal.Operation
	err := s.update(ctx, named("committing the sending of "+key), func(tx *sqlstore.Tx) error {
		var err error
		op, err = s.j.SendTx(ctx, tx, key, worker)
		if err != nil {
			return err
		}
		acct, err := s.accountFor(ctx, tx, batch, key)
		if err != nil {
			return err
		}
		hold := ledger.HoldRequest{ID: ledger.AttemptHoldID(op.Key, op.Attempts), Account: acct, Amount: amount, Operation: key}
		if _, err = s.l.HoldTx(ctx, tx, hold); err != nil {
			return err
		}
		// Paid for at last: no budget's earlier refusal holds any more.
		_, err = tx.SQL().ExecContext(ctx, `DELETE FROM recall_refusals WHERE op_key = $1`, key)
		return err
	})
	return op, err
}

// Annotate records evidence about the request key that worker is sending,
// durably, before the request goes on.
func (s *Store) Annotate(ctx context.Context, key, worker string, ev journal.Evidence) error {
	return s.j.Annotate(ctx, key, worker, ev)
}

// Record stores how the chunk's request ended, in one transaction: for an
// applied request, the transcript t and the settlement of its hold at
// t.Cost; for one that charged nothing, the release of its hold; for an
// ambiguous one, nothing more: its hold stays, as the money may be spent.
func (s *Store) Record(ctx context.Context, c Chunk, rep journal.Report, t *Transcript) error {
	if rep.To == journal.Applied && t == nil {
		return fmt.Errorf("store: request %s applied without a transcript", c.Key)
	}
	ctx = context.WithoutCancel(ctx) // an outcome is always written
	return s.update(ctx, named("recording the outcome of "+c.Key), func(tx *sqlstore.Tx) error {
		if _, err := s.j.RecordTx(ctx, tx, c.Key, rep); err != nil {
			return err
		}
		switch rep.To {
		case journal.Applied:
			if err := putTranscript(ctx, tx, c, *t, s.now()); err != nil {
				return err
			}
			return s.settle(ctx, tx, c.Key, t.Cost)
		case journal.NotApplied, journal.FailedSafe:
			return s.release(ctx, tx, c.Key)
		}
		return nil
	})
}

// heldFor returns the hold that pays for the request key while its
// outcome is open, if there is one: none before it was sent.
func (s *Store) heldFor(ctx context.Context, tx ledger.Tx, key string) (ledger.Hold, bool, error) {
	holds, err := s.l.HoldsTx(ctx, tx, ledger.HoldFilter{Operation: key, States: []ledger.HoldState{ledger.Held}})
	if err != nil || len(holds) == 0 {
		return ledger.Hold{}, false, err
	}
	return holds[len(holds)-1], true, nil
}

// settle settles the request's open hold at cost; 0 keeps the amount held.
func (s *Store) settle(ctx context.Context, tx *sqlstore.Tx, key string, cost ledger.Amount) error {
	h, ok, err := s.heldFor(ctx, tx, key)
	if err != nil || !ok {
		return err
	}
	if cost == 0 {
		cost = h.Amount
	}
	if _, err = s.l.SettleTx(ctx, tx, h.ID, cost); err != nil {
		return err
	}
	return s.refit(ctx, tx, h)
}

// release releases the request's open hold.
func (s *Store) release(ctx context.Context, tx *sqlstore.Tx, key string) error {
	h, ok, err := s.heldFor(ctx, tx, key)
	if err != nil || !ok {
		return err
	}
	if _, err = s.l.VoidTx(ctx, tx, h.ID); err != nil {
		return err
	}
	return s.refit(ctx, tx, h)
}

// putTranscript keeps the transcript of chunk c, once: a second answer for
// the same chunk changes nothing. Its segments are indexed for search with
// their offsets from the start of the recording.
func putTranscript(ctx context.Context, tx *sqlstore.Tx, c Chunk, t Transcript, now time.Time) error {
	q := tx.SQL()
	t.Segments = spanned(t.Segments, c.Duration)
	segs, err := json.Marshal(t.Segments)
	if err != nil {
		return err
	}
	// The chunk's plan names who made the transcript.
	res, err := q.ExecContext(ctx, `INSERT INTO recall_transcripts (sha256, idx, provider, model, settings, text, segments, request_id, cost, created_at, timing, language)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (sha256, provider, model, settings, idx) DO NOTHING`,
		c.SHA256, c.Index, c.Provider, c.Model, c.Settings, t.Text, string(segs), t.RequestID, int64(t.Cost), now.UnixMicro(), string(t.Timing), t.Language)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // already stored
	}
	for _, seg := range t.Segments {
		if seg.Text == "" {
			continue
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO recall_search (sha256, provider, model, settings, idx, start_us, end_us, speaker, text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			c.SHA256, c.Provider, c.Model, c.Settings, c.Index, micros(c.Start+seg.Start), micros(c.Start+seg.End), seg.Speaker, seg.Text); err != nil {
			return err
		}
	}
	return nil
}

// spanned returns segs with each segment that has no length (a
// transcript given as plain text has no times) running to the end of its
// chunk, of length d: a cue of no length is one that subtitle players and
// WebVTT parsers reject.
func spanned(segs []recording.Segment, d time.Duration) []recording.Segment {
	out := make([]recording.Segment, len(segs))
	for i, seg := range segs {
		if seg.End <= seg.Start && d > seg.Start {
			seg.End = d
		}
		out[i] = seg
	}
	return out
}

// Progress returns how far each content of the batch's added files got
// with its latest plan: the provider and model last asked for it.
func (s *Store) Progress(ctx context.Context, batch string) (map[string]recording.Progress, error) {
	return s.ProgressOf(ctx, batch, recording.Transcriber{})
}

// ProgressOf returns how far each content of the batch's added files got
// with who (zero: with its latest plan); a content that who was never
// asked for is waiting.
func (s *Store) ProgressOf(ctx context.Context, batch string, who recording.Transcriber) (map[string]recording.Progress, error) {
	chunks, err := s.batchChunks(ctx, batch, who)
	if err != nil {
		return nil, err
	}
	states, err := s.states(ctx, chunks)
	if err != nil {
		return nil, err
	}
	refusals, err := s.Refusals(ctx, batch)
	if err != nil {
		return nil, err
	}
	refused := make(map[string]bool, len(refusals))
	for _, r := range refusals {
		refused[r.Key] = true
	}
	type tally struct{ total, applied, untranscribed, ambiguous, failed, sending, refused int }
	t := map[string]*tally{}
	for _, c := range chunks {
		x := t[c.sha]
		if x == nil {
			x = &tally{}
			t[c.sha] = x
		}
		if c.key == "" {
			continue
		}
		x.total++
		switch states[c.key] {
		case journal.Applied:
			x.applied++
			if !c.transcribed {
				x.untranscribed++
			}
		case journal.Ambiguous:
			x.ambiguous++
		case journal.FailedSafe, journal.NotApplied:
			x.failed++
		case journal.Sending:
			x.sending++
		case journal.Pending:
			if refused[c.key] {
				x.refused++
			}
		}
	}
	out := make(map[string]recording.Progress, len(t))
	for sha, x := range t {
		switch {
		case x.ambiguous > 0:
			out[sha] = recording.Ambiguous
		case x.sending > 0:
			out[sha] = recording.Sending
		case x.failed > 0:
			out[sha] = recording.FailedSafely
		case x.refused > 0:
			out[sha] = recording.RefusedByBudget
		case x.total > 0 && x.applied == x.total && x.untranscribed > 0:
			out[sha] = recording.Untranscribed
		case x.total > 0 && x.applied == x.total:
			out[sha] = recording.Done
		default:
			out[sha] = recording.Waiting
		}
	}
	return out, nil
}

// batchChunk is a chunk of one of a batch's contents, or a content not yet
// cut (key empty).
type batchChunk struct {
	sha, key    string
	who         recording.Transcriber
	planned     int64
	transcribed bool
}

// batchChunks returns the chunks for who (zero: of each content's latest
// plan) of the contents of the batch's added files, and a row without a
// key for each content not yet cut for who.
func (s *Store) batchChunks(ctx context.Context, batch string, who recording.Transcriber) ([]batchChunk, error) {
	all, err := list(ctx, s, func(rows *sql.Rows) (c batchChunk, err error) {
		err = rows.Scan(&c.sha, &c.key, &c.who.Provider, &c.who.Model, &c.who.Settings, &c.planned, &c.transcribed)
		return c, err
	}, `SELECT DISTINCT i.sha256, COALESCE(c.op_key, ''), COALESCE(c.provider, ''), COALESCE(c.model, ''), COALESCE(c.settings, ''), COALESCE(c.planned_at, 0), t.sha256 IS NOT NULL
		FROM recall_items i
		LEFT JOIN recall_chunks c ON c.sha256 = i.sha256
		LEFT JOIN recall_transcripts t ON `+sameChunk+`
		WHERE i.batch = $1 AND i.state = $2`, batch, recording.Added)
	if err != nil {
		return nil, err
	}
	chosen := map[string]recording.Transcriber{}
	if !who.IsZero() {
		for _, c := range all {
			chosen[c.sha] = who
		}
	} else {
		// The latest plan, as latest chooses it.
		planned := map[string]int64{}
		for _, c := range all {
			p, seen := planned[c.sha]
			w := chosen[c.sha]
			if !seen || c.planned > p || c.planned == p && before(c.who, w) {
				planned[c.sha], chosen[c.sha] = c.planned, c.who
			}
		}
	}
	out := make([]batchChunk, 0, len(all))
	seen := map[string]bool{}
	for _, c := range all {
		if c.key != "" && c.who == chosen[c.sha] {
			out = append(out, c)
			seen[c.sha] = true
		}
	}
	for _, c := range all {
		if !seen[c.sha] {
			out = append(out, batchChunk{sha: c.sha})
			seen[c.sha] = true
		}
	}
	return out, nil
}

// before orders transcribers planned at the same time, as latest does:
// by provider, model and settings.
func before(x, y recording.Transcriber) bool {
	if x.Provider != y.Provider {
		return x.Provider < y.Provider
	}
	if x.Model != y.Model {
		return x.Model < y.Model
	}
	return x.Settings < y.Settings
}

// states returns the journal state of each chunk's request.
func (s *Store) states(ctx context.Context, chunks []batchChunk) (map[string]journal.State, error) {
	keys := make([]string, 0, len(chunks))
	for _, c := range chunks {
		if c.key != "" {
			keys = append(keys, c.key)
		}
	}
	out := make(map[string]journal.State, len(keys))
	if len(keys) == 0 {
		return out, nil // an empty filter would select every operation
	}
	ops, err := s.j.List(ctx, journal.Filter{Keys: keys})
	for _, op := range ops {
		out[op.Key] = op.State
	}
	return out, err
}

// Part is a chunk of a content with its transcript, if it has one;
// segments are timed from the start of the chunk.
type Part struct {
	Chunk
	Transcribed bool
	Text        string
	Segments    []recording.Segment
	// Timing says how finely the provider timed the segments; empty for
	// transcripts kept before it was recorded (timed segments, then).
	Timing recording.Timing
	// Language is the transcript's (recording.Transcript.Language); empty
	// for transcripts kept before it was recorded.
	Language string
}

// Languages counts the batch's recordings by the languages their
// transcripts are in, as detected or asked, the sandbox's placeholders
// left out: a recording in two languages, or transcribed in two, counts
// in each.
func (s *Store) Languages(ctx context.Context, batch string) (map[string]int, error) {
	type count struct {
		language string
		n        int
	}
	counts, err := list(ctx, s, func(rows *sql.Rows) (c count, err error) {
		return c, rows.Scan(&c.language, &c.n)
	}, `SELECT t.language, COUNT(DISTINCT t.sha256) FROM recall_transcripts t
		WHERE t.language <> '' AND t.provider <> $2 AND t.sha256 IN (SELECT sha256 FROM recall_items WHERE batch = $1 AND state = $3)
		GROUP BY t.language`, batch, recording.Sandbox, recording.Added)
	out := map[string]int{}
	for _, c := range counts {
		out[c.language] = c.n
	}
	return out, err
}

// Language returns the language of a transcript made of parts: the one
// of the most audio among its parts' (the first by tag of those tied), ""
// where none has one; and whether the provider detected it, the
// transcript's settings asking for none.
func Language(parts []Part) (tag string, detected bool) {
	heard := map[string]time.Duration{}
	for _, p := range parts {
		if p.Language != "" {
			heard[p.Language] += p.Duration
		}
	}
	for lang, d := range heard {
		if tag == "" || d > heard[tag] || d == heard[tag] && lang < tag {
			tag = lang
		}
	}
	return tag, tag != "" && len(parts) > 0 && parts[0].AskedLanguage() == ""
}

// Parts returns the content's chunks for who (zero: its latest plan's),
// in order, with their transcripts.
func (s *Store) Parts(ctx context.Context, sha string, who recording.Transcriber) ([]Part, error) {
	who, err := s.latest(ctx, sha, who)
	if err != nil || who.IsZero() {
		return nil, err
	}
	return list(ctx, s, func(rows *sql.Rows) (Part, error) {
		p := Part{Chunk: Chunk{SHA256: sha, Transcriber: who}}
		var start, dur int64
		var text, segs, timing, lang *string
		if err := rows.Scan(&p.Index, &p.Count, &start, &dur, &p.Key, &text, &segs, &timing, &lang); err != nil {
			return p, err
		}
		if timing != nil {
			p.Timing = recording.Timing(*timing)
		}
		if lang != nil {
			p.Language = *lang
		}
		p.Start, p.Duration = fromMicros(start), fromMicros(dur)
		if text == nil {
			return p, nil
		}
		p.Transcribed, p.Text = true, *text
		if err := json.Unmarshal([]byte(*segs), &p.Segments); err != nil {
			return p, fmt.Errorf("store: the transcript of chunk %d of %s cannot be read: %w", p.Index, sha[:min(12, len(sha))], err)
		}
		return p, nil
	}, `SELECT c.idx, c.count, c.start_us, c.duration_us, c.op_key, t.text, t.segments, t.timing, t.language
		FROM recall_chunks c LEFT JOIN recall_transcripts t ON `+sameChunk+`
		WHERE c.sha256 = $1 AND c.provider = $2 AND c.model = $3 AND c.settings = $4 ORDER BY c.idx`, sha, who.Provider, who.Model, who.Settings)
}
