package sandbox

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParsePlan(t *testing.T) {
	p, err := ParsePlan("1:charge-drop, 3:429,hang=5%,503=10.5%")
	if err != nil {
		t.Fatal(err)
	}
	if p.ByRequest[1] != ChargeDrop || p.ByRequest[3] != TooMany || p.Rates[Hang] != 0.05 || p.Rates[Status503] != 0.105 {
		t.Fatalf("plan %+v", p)
	}
	for _, bad := range []string{"0:hang", "x:hang", "1:explode", "hang=5", "hang=150%", "hang", "explode=1%"} {
		if _, err := ParsePlan(bad); err == nil || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("ParsePlan(%q) = %v, want an error quoting it", bad, err)
		}
	}
	if p, err := ParsePlan(""); err != nil || len(p.ByRequest)+len(p.Rates) != 0 {
		t.Errorf("empty plan: %+v %v", p, err)
	}
}

func TestPriceIsPerStartedSecond(t *testing.T) {
	s := New(Options{}) // $0.006 a minute: 100 micro-dollars a second
	for d, want := range map[time.Duration]int64{
		0: 0, time.Millisecond: 100, time.Second: 100, 1500 * time.Millisecond: 200, time.Minute: 6000,
	} {
		if got := s.price(d); int64(got) != want {
			t.Errorf("price(%s) = %d, want %d", d, got, want)
		}
	}
}

func TestRandomFaultsAreRepeatable(t *testing.T) {
	plan, _ := ParsePlan("503=30%")
	draw := func() []Fault {
		s := New(Options{Plan: plan})
		var fs []Fault
		for range 50 {
			_, f := s.fault()
			fs = append(fs, f)
		}
		return fs
	}
	a, b := draw(), draw()
	hits := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs between two sandboxes with the same seed", i)
		}
		if a[i] == Status503 {
			hits++
		}
	}
	if hits < 5 || hits > 30 {
		t.Fatalf("%d faults in 50 draws at 30 %%", hits)
	}
}

// TestPlaceholderSpeakers: asked for speakers, the placeholder's segments
// cover the audio without a gap, A's and B's in turn, two at least; not
// asked, they name no speaker.
func TestPlaceholderSpeakers(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 10 * time.Second, 12 * time.Second, 31 * time.Second} {
		segs := placeholder(d, "0123456789abcdef", false, true)["segments"].([]map[string]any)
		at := 0.0
		for i, seg := range segs {
			if want := []string{"A", "B"}[i%2]; seg["speaker"] != want || seg["start"] != at || seg["end"].(float64) <= at {
				t.Errorf("%s: segment %d is %v; want %s's from %.2f s", d, i, seg, want, at)
			}
			at = seg["end"].(float64)
		}
		if len(segs) < 2 || at != d.Seconds() {
			t.Errorf("%s: %d segments to %.2f s", d, len(segs), at)
		}
	}
	for _, seg := range placeholder(12*time.Second, "0123456789abcdef", false, false)["segments"].([]map[string]any) {
		if _, ok := seg["speaker"]; ok {
			t.Errorf("a speaker not asked for: %v", seg)
		}
	}
}
