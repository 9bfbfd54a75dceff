// Package consoleui is toolgate's part of the console: the review of the
// surface, each tool's risk class and reasons beside its exposure, retry
// mode and deadline; changes to the configuration, shown as a diff,
// checked by the loader that serve uses and written atomically; and how
// the console shows and settles a call whose outcome is unknown.
package consoleui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Options configure toolgate's pages.
type Options struct {
	// Doc is the OpenAPI document, loaded once; SpecPath names it.
	Doc      *spec.Document
	SpecPath string
	// ConfigPath is the configuration file the pages read on each request
	// and write; "" shows the defaults and changes nothing. A file that
	// does not exist yet is empty, and created on the first change.
	ConfigPath string
	// Registry, if not nil, receives the pages' metrics.
	Registry prometheus.Registerer
	// Log receives a structured line for each change written; nil
	// discards them.
	Log *slog.Logger
}

// UI is toolgate's pages.
type UI struct {
	opts   Options
	tmpl   *template.Template
	writes prometheus.Counter
	log    *slog.Logger

	mu    sync.Mutex
	cache *surface // the surface of the configuration last read
	// writing serializes writes, from the check that the file is the one
	// the form was made from to the rename.
	writing sync.Mutex
}

// New returns toolgate's pages.
func New(opts Options) (*UI, error) {
	tmpl, err := template.New("toolgate").Funcs(console.Funcs()).Funcs(templateFuncs()).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	u := &UI{opts: opts, tmpl: tmpl, log: opts.Log}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	u.writes = prometheus.NewCounter(prometheus.CounterOpts{Name: "toolgate_console_config_writes_total",
		Help: "Changes to the configuration written through the console."})
	if opts.Registry != nil {
		if err := opts.Registry.Register(u.writes); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// Pages returns the pages toolgate adds to the console.
func (u *UI) Pages() []console.Page {
	return []console.Page{{Title: "Tools", Path: "/tools", Handlers: map[string]http.Handler{
		"GET /tools":          http.HandlerFunc(u.tools),
		"POST /tools/preview": http.HandlerFunc(u.preview),
		"POST /tools/write":   http.HandlerFunc(u.write),
	}}}
}

// Work returns how the console shows and settles toolgate's ambiguous
// calls: the journal's own resolution, as toolgate resolve records it.
func Work() console.Work {
	return console.Work{
		Kind: toolgate.JournalKind, Noun: "call",
		Applied:    "the upstream did apply the call",
		NotApplied: "it did not; the call may be made again",
		Check: "Check in the upstream system, or with a read tool, whether the call took effect, then say what you found. " +
			"Either way, calls of the tool on that resource are allowed again once it is settled.",
		Describe: describeCall,
	}
}

// describeCall says what a journaled call did: the tool, and the request
// on its resource.
func describeCall(op journal.Operation) string {
	tool, _ := op.Evidence["tool"].(string)
	resource, _ := op.Evidence["resource"].(string)
	if tool == "" {
		return op.Subject
	}
	return tool + ": " + resource
}

// surface is the catalog of the document under one configuration, as
// the pages show it.
type surface struct {
	data    []byte // the configuration as written
	hash    string
	missing bool // the file does not exist yet
	cfg     *config.Config
	cat     *toolgate.Catalog
	rows    []toolgate.Row
	sum     toolgate.Summary
	written map[config.Setting]string
	err     error // the configuration does not load, or the catalog cannot be built
}

// read reads the configuration and builds its surface; the last one is
// kept while the file does not change.
func (u *UI) read() (*surface, error) {
	var data []byte
	missing := false
	if u.opts.ConfigPath != "" {
		var err error
		data, err = os.ReadFile(u.opts.ConfigPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing, data = true, nil
		case err != nil:
			return nil, fmt.Errorf("cannot read the configuration %s: %w", u.opts.ConfigPath, err)
		}
	}
	h := digest(data)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cache != nil && u.cache.hash == h && u.cache.missing == missing {
		return u.cache, nil
	}
	s := u.build(data)
	s.missing = missing
	u.cache = s
	return s, nil
}

// build makes the surface of the document under the configuration data.
func (u *UI) build(data []byte) *surface {
	s := &surface{data: data, hash: digest(data)}
	s.cfg, s.err = config.Parse(data)
	if s.err != nil {
		var ce *config.Error
		if errors.As(s.err, &ce) && u.opts.ConfigPath != "" {
			ce.File = u.opts.ConfigPath
		}
		return s
	}
	if s.cat, s.err = toolgate.Build(u.opts.Doc, s.cfg); s.err != nil {
		return s
	}
	if s.rows, s.sum, s.err = s.cat.Inspect(); s.err != nil {
		return s
	}
	s.written, s.err = config.Written(data)
	return s
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// tags returns the document's tags, sorted, with the number of tools of
// each.
func (s *surface) tags() []tagInfo {
	count := map[string]int{}
	for _, t := range s.cat.Tools {
		for _, tag := range t.Tags {
			count[tag]++
		}
	}
	out := make([]tagInfo, 0, len(count))
	for tag, n := range count {
		out = append(out, tagInfo{Name: tag, Tools: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type tagInfo struct {
	Name             string
	Tools            int
	Expose, Deadline string // as written
}

// classes are the risk classes, in order.
var classes = []string{"read", "write", "destructive", "privileged"}

// templateFuncs are the functions toolgate's templates use beside the
// console's.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"classes":  func() []string { return classes },
		"count":    func(m map[string]int, k string) int { return m[k] },
		"contains": slices.Contains[[]string],
	}
}
