// Command archive runs recall-archive's main job on this machine, with no
// account: it makes a few recordings with ffmpeg (speech from espeak-ng
// when it is installed), transcribes them through the built-in sandbox
// provider with one call that charges and then drops the connection, and
// walks through settling that ambiguous call. Run it with:
//
//	go run ./examples/archive                   # the whole walk-through, in a folder removed at the end
//	go run ./examples/archive --work DIR        # the same, its recordings, transcripts and database kept in DIR
//	go run ./examples/archive --db /tmp/demo.db # up to the ambiguous requests, kept for recall-archive console
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

func main() {
	keep := flag.String("db", "", "keep the archive in `FILE` (a new one) and stop with its ambiguous requests, for recall-archive console --db FILE")
	work := flag.String("work", "", "keep the recordings, transcripts and database in `DIR` (default: a temporary folder, removed at the end)")
	flag.Parse()
	if err := run(os.Stdout, *work, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

var lines = []string{
	"The archive keeps every recording once, whatever its name.",
	"A paid call that may have gone through is never sent again.",
	"A person settles what a machine cannot know.",
	"Failures before the boundary are retried freely.",
}

// run plays the demo in work, or in a new temporary folder that it
// removes at the end. With keep, the archive is that file, and the demo
// stops once it has asked the provider about the ambiguous requests,
// leaving them for a person to settle in the console: then the folder is
// kept too, for the transcript the provider kept.
func run(w io.Writer, work, keep string) error {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return fmt.Errorf("ffmpeg is needed (apt-get install ffmpeg)")
	}
	if keep != "" {
		if _, err := os.Stat(keep); err == nil {
			return fmt.Errorf("%s exists: give --db a new file, so that the demo starts from an empty archive", keep)
		}
	}
	temporary := work == ""
	if temporary {
		var err error
		if work, err = os.MkdirTemp("", "recall-archive-demo-"); err != nil {
			return err
		}
		if keep == "" {
			defer func() {
				os.RemoveAll(work)
				fmt.Fprintf(w, "\nThe demo's folder %s is removed; give --work DIR to keep the transcripts and the database.\n", work)
			}()
		}
	}
	rec := filepath.Join(work, "recordings")
	os.MkdirAll(rec, 0o755)
	for i, line := range lines {
		if err := record(filepath.Join(rec, fmt.Sprintf("interview %d.mp3", i+1)), line, i); err != nil {
			return err
		}
	}
	// The same recording under another name: one content, paid for once.
	data, _ := os.ReadFile(filepath.Join(rec, "interview 1.mp3"))
	os.WriteFile(filepath.Join(rec, "interview 1 (copy).mp3"), data, 0o644)

	// The sandbox provider: its second request is charged, then its
	// connection dropped before the answer; its third gets a 503 and is not
	// charged. Neither caller can tell which happened.
	plan, _ := sandbox.ParsePlan("2:charge-drop,3:503")
	sb := sandbox.New(sandbox.Options{Plan: plan})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sb}
	go srv.Serve(ln)
	defer srv.Close()
	provider := "http://" + ln.Addr().String()

	os.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	db := keep
	if db == "" {
		db = filepath.Join(work, "recall.db")
	}
	out := filepath.Join(work, "transcripts")
	say := func(format string, args ...any) { fmt.Fprintf(w, "\n# "+format+"\n", args...) }
	cmd := func(args ...string) int {
		fmt.Fprintf(w, "$ recall-archive %s\n", strings.Join(quote(args), " "))
		return cli.Main(context.Background(), append([]string{"--db", db}, args...), cli.Env{Stdout: w, Stderr: w})
	}

	say("Five files, four recordings, in %s.", rec)
	cmd("add", "interviews", rec)
	cmd("estimate", "interviews")
	say("Transcribe them through the sandbox provider (at %s).", provider)
	// A request is over within --timeout, and stays with its run for
	// --lease: short ones, so that the demo need not wait long.
	lease := 3 * time.Second
	cmd("run", "interviews", "--provider-url", provider, "--out", out, "--timeout", "2s", "--lease", lease.String())
	say("Two calls got no usable answer: one lost its connection after sending, one got a 503.")
	say("Nobody knows whether they were charged, so both are ambiguous; their money stays held,")
	say("and neither is sent again.")
	cmd("ambiguous", "interviews")

	say("Ask the provider. The sandbox can be asked: GET /v1/sandbox/charges?tag=KEY.")
	keys := ambiguousKeys(db)
	found := map[string]string{} // the transcript file of each request charged
	for i, key := range keys {
		transcript, charged := askSandbox(provider, key)
		fmt.Fprintf(w, "the sandbox on %s: charged=%v\n", key, charged)
		if charged {
			// It went through: the provider has the transcript.
			found[key] = filepath.Join(work, fmt.Sprintf("recovered-%d.txt", i+1))
			os.WriteFile(found[key], []byte(transcript), 0o644)
			fmt.Fprintf(w, "its transcript, from the provider, is in %s\n", found[key])
		}
	}
	if keep != "" {
		fmt.Fprintf(w, "\nThe archive is in %s, with %d ambiguous requests: recall-archive console --db %s shows the batch and them.\n", keep, len(keys), keep)
		fmt.Fprintln(w, "Settle the one the sandbox charged as applied, with its transcript file, and the other as not applied;")
		fmt.Fprintln(w, "then press retry-failed --safe-only, and run the batch again to send it.")
		return nil
	}
	if len(found) < len(keys) {
		say("A request is settled as not applied only once the lease it was sent under (--lease) is over:")
		say("until then it might still be on its way. Wait for it.")
		time.Sleep(lease)
	}
	for _, key := range keys {
		if file, charged := found[key]; charged {
			// Settle the hold, and keep the transcript.
			cmd("resolve", key, "--applied", "--transcript", file, "--note", "listed in the provider's charges")
		} else {
			cmd("resolve", key, "--not-applied", "--note", "not in the provider's charges")
		}
	}
	say("A request settled as not applied is safe to send again; the other one is not touched.")
	cmd("retry-failed", "interviews", "--safe-only", "--provider-url", provider, "--out", out, "--timeout", "2s", "--lease", lease.String())
	cmd("status", "interviews")
	if !temporary {
		fmt.Fprintf(w, "\nTranscripts are in %s; the database is %s.\n", out, db)
	}
	return nil
}

// record makes a recording: speech when espeak-ng is installed, a tone
// otherwise, padded with silence to six seconds: every recording costs the
// same, so what the demo spends does not depend on which of them meet the
// faults.
func record(path, text string, i int) error {
	var args []string
	if _, err := exec.LookPath("espeak-ng"); err == nil {
		wav := path + ".wav"
		if out, err := exec.Command("espeak-ng", "-w", wav, text).CombinedOutput(); err != nil {
			return fmt.Errorf("espeak-ng: %v: %s", err, out)
		}
		defer os.Remove(wav)
		args = []string{"-i", wav}
	} else {
		args = []string{"-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=%d:duration=%d", 220+110*i, 3+i)}
	}
	args = append([]string{"-hide_banner", "-loglevel", "error", "-y"}, append(args, "-af", "apad=whole_dur=6", "-t", "6", path)...)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg: %v: %s", err, out)
	}
	return nil
}

func ambiguousKeys(db string) []string {
	var items []struct{ Key string }
	var buf strings.Builder
	cli.Main(context.Background(), []string{"--db", db, "--json", "ambiguous"}, cli.Env{Stdout: &buf, Stderr: &buf})
	json.Unmarshal([]byte(buf.String()), &items)
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	return keys
}

// askSandbox looks the request up in the sandbox's charges, and returns
// the transcript it kept if it charged.
func askSandbox(base, key string) (string, bool) {
	resp, err := http.Get(base + "/v1/sandbox/charges?tag=" + url.QueryEscape(key))
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var out struct {
		Charges []struct {
			Transcript struct{ Text string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if len(out.Charges) == 0 {
		return "", false
	}
	return out.Charges[0].Transcript.Text, true
}

func quote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return out
}
