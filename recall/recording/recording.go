// Package recording is recall-archive's vocabulary: the states of a file
// in a batch and the progress of its content, the transcriber that
// transcribes it, and the transcript it gets back. It imports nothing of
// the module, so that the store that keeps these, the providers that
// make transcripts and the pages and commands that show them all speak of
// them in the same words, without one of them owning the others'.
package recording

import (
	"strings"
	"time"
)

// The states of a file in a batch.
const (
	// Added: a media file, hashed, waiting to be transcribed.
	Added = "added"
	// Failed: a failure before any paid request that may go away (ffmpeg
	// missing, a file that could not be read, its audio proxy); safe to
	// retry.
	Failed = "failed"
	// Rejected: not something that can be transcribed (not media, no audio
	// track); retrying will not change it.
	Rejected = "rejected"
)

// Progress is how far a content of a batch got, from its chunks'
// requests.
type Progress string

// The progress of a content.
const (
	// Waiting: not planned yet, or some chunks still to send.
	Waiting Progress = "waiting"
	// Sending: a chunk's request is in flight.
	Sending Progress = "sending"
	// Done: every chunk transcribed.
	Done Progress = "done"
	// Ambiguous: a chunk's request may have been paid for, without an
	// answer.
	Ambiguous Progress = "ambiguous"
	// FailedSafely: a chunk's request failed before it was sent, or the
	// provider refused it; nothing was paid, and a safe retry queues it
	// again.
	FailedSafely Progress = "failed"
	// Untranscribed: paid for, as a look-up at the provider found, but the
	// provider kept no transcript to fetch.
	Untranscribed Progress = "paid_without_transcript"
	// RefusedByBudget: a chunk was never sent because the batch's budget
	// could not hold its cost; not a failure: a run after the budget is
	// raised sends it.
	RefusedByBudget Progress = "refused_by_budget"
)

// Transcriber is a provider's model with the settings it was asked for:
// what makes a transcript. A recording is transcribed once by each
// transcriber asked for it; transcribing it again with another is done on
// purpose (recall-archive retranscribe), never by a run that asks for
// other settings.
type Transcriber struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Settings is the canonical form of the settings that change what is
	// transcribed (language, speakers, prompt, vocabulary; see
	// provider.Options.Settings); empty for the provider's defaults.
	Settings string `json:"settings,omitempty"`
}

// IsZero reports whether t names no transcriber: for the methods that
// take one, the content's latest.
func (t Transcriber) IsZero() bool { return t.Provider == "" && t.Model == "" }

// String is "provider/model", followed by " with " and the settings
// when there are any.
func (t Transcriber) String() string {
	if t.Settings == "" {
		return t.Provider + "/" + t.Model
	}
	return t.Provider + "/" + t.Model + " with " + t.Settings
}

// AskedLanguage returns the language the settings ask for, "" when they
// leave it to the provider to detect.
func (t Transcriber) AskedLanguage() string {
	for part := range strings.SplitSeq(t.Settings, ",") {
		if v, ok := strings.CutPrefix(part, "language="); ok {
			return v
		}
	}
	return ""
}

// Described is String, saying so when the settings are the provider's
// defaults: for telling one transcript from another.
func (t Transcriber) Described() string {
	if t.Settings == "" {
		return t.String() + " with its default settings"
	}
	return t.String()
}

// Sandbox is the built-in provider: its transcripts are placeholders, left
// out of a search unless asked for, and its charges are play money, kept
// apart from a batch's budget.
const Sandbox = "sandbox"

// Transcript is what a provider returned for a chunk.
type Transcript struct {
	Text string `json:"text"`
	// Language is the audio's language as a BCP 47 tag ("en", "pt-BR"):
	// the one the provider detected, or the one asked for; empty when the
	// provider said none.
	Language string        `json:"language,omitempty"`
	Duration time.Duration `json:"duration"`
	Segments []Segment     `json:"segments"`
	// Timing says how finely the segments are timed.
	Timing Timing `json:"timing,omitempty"`
	// RequestID is the provider's id for the request, kept as evidence.
	RequestID string `json:"request_id,omitempty"`
}

// Segment is a timed piece of a transcript.
type Segment struct {
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	Text  string        `json:"text"`
	// Speaker labels who speaks, as the provider tells them apart ("A",
	// "B"...), when speakers were asked for.
	Speaker string `json:"speaker,omitempty"`
	// Words are the segment's words as the provider timed them, in order,
	// when it timed each word; none otherwise (and in transcripts kept
	// before words were).
	Words []Word `json:"words,omitempty"`
}

// Word is a word as the provider timed it. Its text is the provider's:
// with the punctuation of the segment's text (AssemblyAI, Deepgram) or
// without it (OpenAI's whisper-1).
type Word struct {
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	Text  string        `json:"text"`
	// Speaker labels who says it, as Segment.Speaker does.
	Speaker string `json:"speaker,omitempty"`
	// Confidence is the provider's, from 0 to 1, where it gives one.
	Confidence *float64 `json:"confidence,omitempty"`
}

// Speaker is how the speaker labelled label is shown: name, the name a
// person gave the label, or else "Speaker A".
func Speaker(label, name string) string {
	if name != "" {
		return name
	}
	return "Speaker " + label
}

// Timing says how finely a transcript is timed.
type Timing string

// The timings of a transcript.
const (
	// TimingSegments: the provider timed each segment.
	TimingSegments Timing = "segments"
	// TimingWords: the provider timed each word only, and the segments
	// are its words grouped into sentences.
	TimingWords Timing = "words"
	// TimingChunk: the provider gave text alone (OpenAI's gpt-4o
	// transcription models): one segment spans the chunk, so a search
	// or a subtitle is timed to the chunk only.
	TimingChunk Timing = "chunk"
)
