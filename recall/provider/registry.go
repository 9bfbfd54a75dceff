package provider

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// Registration is everything recall knows of one provider, in one place:
// its name, defaults, limits, how it bills and what it charges, and how a
// request is made and its answer read. Every other part of recall-archive
// (the command line's defaults, the prices) asks the registration.
type Registration struct {
	// Name is what --provider takes.
	Name string
	// About says in a few words what the provider is.
	About string
	// DefaultModel is the model used when none is given.
	DefaultModel string
	// KeyEnv names the environment variable that holds the API key; empty
	// for a server that takes none.
	KeyEnv string
	// BaseURL is the API's root when none is given; empty for the sandbox,
	// which a run starts itself.
	BaseURL string
	// Billing is how the provider rounds each request before pricing it.
	Billing Billing
	// Prices are list prices in micro-dollars per minute of audio, by
	// model, at the time of writing; a prices file overrides them.
	Prices map[string]ledger.Amount
	// AnyModel is the price of a model Prices does not list, for a server
	// that runs whatever model it was given (a self-hosted one costs
	// nothing per minute); nil when an unlisted model has no price.
	AnyModel *ledger.Amount
	// Records says how an ambiguous request can be looked up, or that it
	// cannot; for the documentation.
	Records string
	// Speakers says how the provider labels who speaks, by the request's
	// parameters; empty when it does not. speakerModels, if set, are the
	// models that do.
	Speakers      string
	speakerModels func(model string) bool

	limits func(model string) Limits
	api    func(o Options) api
	hints  hintRules
}

// Price returns the registered price of model, and whether there is one.
func (r Registration) Price(model string) (ledger.Amount, bool) {
	if p, ok := r.Prices[model]; ok {
		return p, true
	}
	if r.AnyModel != nil {
		return *r.AnyModel, true
	}
	return 0, false
}

// Models returns the models with a registered price, sorted.
func (r Registration) Models() []string {
	var ms []string
	for m := range r.Prices {
		ms = append(ms, m)
	}
	slices.Sort(ms)
	return ms
}

// Play reports whether the provider's transcripts are placeholders and its
// charges play money, which never count against a batch's budget nor in
// what it spent: the sandbox's ([recording.Sandbox]).
func (r Registration) Play() bool { return r.Name == recording.Sandbox }

// Limits returns what the provider accepts in one request with model.
func (r Registration) Limits(model string) Limits { return r.limits(model) }

// Billing is how a provider rounds the audio of one request before it
// prices it.
type Billing struct {
	// Increment: each request is billed per started Increment; 0 is one
	// second.
	Increment time.Duration `json:"-"` // increment_seconds in JSON
	// Minimum: a request shorter than Minimum is billed as Minimum.
	Minimum time.Duration `json:"-"` // minimum_seconds in JSON
}

// MarshalJSON writes b with its durations in seconds.
func (b Billing) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Increment float64 `json:"increment_seconds"`
		Minimum   float64 `json:"minimum_seconds"`
	}{b.Increment.Seconds(), b.Minimum.Seconds()})
}

// Cost is what one request of d costs at perMinute micro-dollars a
// minute, rounded as b says, and the micro-dollars rounded up.
func (b Billing) Cost(d time.Duration, perMinute ledger.Amount) ledger.Amount {
	inc := b.Increment
	if inc <= 0 {
		inc = time.Second
	}
	d = max(d, b.Minimum)
	billed := (d + inc - 1) / inc * inc
	const perMinuteUs = int64(time.Minute / time.Microsecond)
	return ledger.Amount((billed.Microseconds()*int64(perMinute) + perMinuteUs - 1) / perMinuteUs)
}

// perSecond is the billing of every provider here but Groq: each request
// per started second, without a minimum.
var perSecond = Billing{Increment: time.Second}

// free is the price per minute of a self-hosted server.
var free = new(ledger.Amount)

// openAIBytes is what OpenAI-compatible APIs take in one upload: 25 MB.
const openAIBytes = 25 << 20

// registrations are the providers, in the order the help lists them.
func registrations() []Registration {
	return []Registration{
		{
			Name: recording.Sandbox, About: "built in, no account needed: placeholder transcripts, play money",
			DefaultModel: "whisper-1", Billing: perSecond,
			Prices:   map[string]ledger.Amount{"whisper-1": 6000},
			Records:  "its charges, by the request's key, all in one answer",
			Speakers: "placeholder speakers A and B in turn (diarized_json, as OpenAI's diarizing model); no count is taken",
			hints:    openAIHints,
			limits:   func(string) Limits { return Limits{MaxBytes: openAIBytes} },
			api: func(o Options) api {
				return &sandbox{openAI{dialect: openAIDialect{path: "/v1/audio/transcriptions", seconds: true, words: true}, baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, tagHeader: "X-Recall-Key", name: "sandbox",
					hints: o.Hints, diarize: o.Speakers != 0}}
			},
		},
		{
			Name: "openai", About: "OpenAI's API: whisper-1 with timed segments and words, gpt-4o-transcribe and gpt-4o-mini-transcribe as text per chunk",
			DefaultModel: "whisper-1", KeyEnv: "OPENAI_API_KEY", BaseURL: "https://api.openai.com/v1", Billing: perSecond,
			Prices:  map[string]ledger.Amount{"whisper-1": 6000, "gpt-4o-transcribe": 6000, "gpt-4o-mini-transcribe": 3000, "gpt-4o-transcribe-diarize": 6000},
			Records: "none per request: its usage page, by time",
			// The diarizing model takes no prompt (CreateTranscriptionRequest).
			hints:         hintRules{language: "language", prompt: "prompt", vocabulary: "prompt", languageForm: twoLetters, promptModels: func(m string) bool { return !diarizes(m) }},
			Speakers:      "with --model gpt-4o-transcribe-diarize only (diarized_json; no count is taken)",
			speakerModels: diarizes,
			limits:        openAILimits,
			api:           openAICompatible("openai", openAIDialect{path: "/v1/audio/transcriptions", seconds: true, textOnly: gpt4oText, words: true}),
		},
		{
			Name: "groq", About: "Groq's OpenAI-compatible API: whisper-large-v3 and whisper-large-v3-turbo, billed at least 10 s a request",
			DefaultModel: "whisper-large-v3-turbo", KeyEnv: "GROQ_API_KEY", BaseURL: "https://api.groq.com/openai/v1",
			Billing: Billing{Increment: time.Second, Minimum: 10 * time.Second},
			Prices:  map[string]ledger.Amount{"whisper-large-v3": 1850, "whisper-large-v3-turbo": 667},
			Records: "none per request: its usage page, by time",
			hints:   openAIHints,
			limits:  func(string) Limits { return Limits{MaxBytes: openAIBytes} },
			api:     openAICompatible("groq", openAIDialect{path: "/v1/audio/transcriptions", seconds: true, words: true}),
		},
		selfHosted("whispercpp", "whisper.cpp's server, self-hosted: POST /inference", "default", "http://127.0.0.1:8080",
			openAIDialect{path: "/inference", seconds: true}),
		selfHosted("localai", "LocalAI, self-hosted: segment times in nanoseconds", "whisper-1", "http://127.0.0.1:8080",
			openAIDialect{path: "/v1/audio/transcriptions", seconds: false}),
		selfHosted("speaches", "speaches (faster-whisper), self-hosted", "Systran/faster-whisper-small", "http://127.0.0.1:8000",
			openAIDialect{path: "/v1/audio/transcriptions", seconds: true, words: true}),
		{
			Name: "deepgram", About: "Deepgram's pre-recorded API",
			DefaultModel: "nova-3", KeyEnv: "DEEPGRAM_API_KEY", BaseURL: "https://api.deepgram.com", Billing: perSecond,
			Prices:   map[string]ledger.Amount{"nova-3": 4300, "nova-2": 4300},
			Records:  "the project's request log, every page of the time since the request was sent, by the request's tag",
			Speakers: "diarize=true; no count is taken",
			// Deepgram documents up to 100 key terms, and as many keywords
			// before it asks for a custom model; the 500 tokens key terms
			// may hold are counted by a tokenizer it does not publish.
			hints: hintRules{language: "language", vocabulary: "keyterm (nova-3) or keywords", languageForm: asGiven,
				vocabularyItems: func(string) int { return 100 }},
			limits: func(string) Limits { return Limits{MaxBytes: 2 << 30} },
			api: func(o Options) api {
				return &deepgram{baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, project: o.Project, speakers: o.Speakers, hints: o.Hints}
			},
		},
		{
			Name: "assemblyai", About: "AssemblyAI: upload, transcript job, polls",
			DefaultModel: "universal-3-pro", KeyEnv: "ASSEMBLYAI_API_KEY", BaseURL: "https://api.assemblyai.com", Billing: perSecond,
			Prices:   map[string]ledger.Amount{"universal-3-pro": 3500, "universal-2": 2500},
			Records:  "the job by its id, else every page of the transcript list since the request was sent, by the upload",
			Speakers: "speaker_labels, with speakers_expected for a count",
			// The limits of TranscriptOptionalParams: a prompt of up to
			// 1,500 words, for Universal-3 Pro only; up to 200 keyterms
			// for Universal-2 and 1,000 for Universal-3 Pro, 6 words each
			// at most.
			hints: hintRules{language: "language_code", prompt: "prompt", vocabulary: "keyterms_prompt", languageForm: underscored,
				promptWords: 1500, promptModels: func(model string) bool { return model == "universal-3-pro" },
				phraseWords: 6, vocabularyItems: func(model string) int {
					if model == "universal-2" {
						return 200
					}
					return 1000
				}},
			limits: func(string) Limits { return Limits{MaxBytes: 2200 << 20} },
			api: func(o Options) api {
				return &assemblyAI{baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, pollEvery: o.PollEvery, speakers: o.Speakers, hints: o.Hints}
			},
		},
	}
}

// selfHosted is the registration of an OpenAI-compatible server that a
// user runs: no key, no charge, any model it was started with.
func selfHosted(name, about, model, baseURL string, d openAIDialect) Registration {
	hints := openAIHints
	if name == "localai" {
		hints = hintRules{} // LocalAI's transcription reads neither field
	}
	return Registration{Name: name, About: about, DefaultModel: model, BaseURL: baseURL, Billing: perSecond, AnyModel: free, hints: hints,
		Records: "none: a self-hosted server charges nothing",
		limits:  func(string) Limits { return Limits{MaxBytes: openAIBytes} },
		api:     openAICompatible(name, d)}
}

// CheckSpeakers refuses speakers (see Options.Speakers) that the provider
// cannot label, naming those that can.
func (r Registration) CheckSpeakers(model string, speakers int) error {
	switch {
	case speakers == 0:
	case r.Speakers == "":
		return fmt.Errorf("provider %s labels no speakers: give --speakers with %s, or leave it out", r.Name, strings.Join(speakerNames(), " or "))
	case r.speakerModels != nil && !r.speakerModels(model):
		return fmt.Errorf("%s/%s labels no speakers: %s", r.Name, model, r.Speakers)
	}
	return nil
}

// speakerNames are the providers that label speakers.
func speakerNames() []string {
	var names []string
	for _, r := range registrations() {
		if r.Speakers != "" {
			names = append(names, r.Name)
		}
	}
	return names
}

// Registered returns every provider's registration, in the order the help
// lists them.
func Registered() []Registration { return registrations() }

// Names returns the providers' names, in the order of [Registered].
func Names() []string {
	var names []string
	for _, r := range registrations() {
		names = append(names, r.Name)
	}
	return names
}

// Lookup returns the registration of the provider name.
func Lookup(name string) (Registration, error) {
	for _, r := range registrations() {
		if r.Name == name {
			return r, nil
		}
	}
	return Registration{}, fmt.Errorf("unknown provider %q: use %s", name, strings.Join(Names(), ", "))
}

// IsPlay reports whether the provider name's charges are play money (the
// sandbox's): false for a name not registered.
func IsPlay(name string) bool {
	r, err := Lookup(name)
	return err == nil && r.Play()
}
