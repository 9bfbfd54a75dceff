package toolgate_test

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
)

// searchTask is a line of testdata/search-tasks.tsv: what an agent is
// asked to do, and the operations ("METHOD path") that do it.
type searchTask struct {
	doc, task string
	answers   []string
}

func readSearchTasks(t *testing.T) map[string][]searchTask {
	t.Helper()
	f, err := os.Open("testdata/search-tasks.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byDoc := map[string][]searchTask{}
	lines := bufio.NewScanner(f)
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("search-tasks.tsv, line %d: %d columns, want 3 (document, task, answer)", n, len(cols))
		}
		task := searchTask{doc: cols[0], task: cols[1]}
		for a := range strings.SplitSeq(cols[2], "|") {
			task.answers = append(task.answers, strings.TrimSpace(a))
		}
		byDoc[task.doc] = append(byDoc[task.doc], task)
	}
	return byDoc
}

// TestSearchQuality searches every operation of each document (the
// hidden ones too: the harder case) for each task of
// testdata/search-tasks.tsv, and fails when fewer than 90 % have a right
// operation among the first three results.
func TestSearchQuality(t *testing.T) {
	t.Parallel()
	byDoc := readSearchTasks(t)
	docs := make([]string, 0, len(byDoc))
	for d := range byDoc {
		docs = append(docs, d)
	}
	sort.Strings(docs)
	var found, total int
	var table []string
	for _, doc := range docs {
		tasks := byDoc[doc]
		t.Run(strings.ReplaceAll(doc, "/", "_"), func(t *testing.T) {
			path := ""
			if doc == "github" {
				path = testspecs.GitHub(t)
			} else {
				path = testspecs.Corpus(t, doc)
			}
			cat := catalog(t, path, "")
			ix := toolgate.NewIndex(cat.Tools)
			top := 0
			for _, task := range tasks {
				hits, _ := ix.Search(toolgate.Query{Words: task.task}, 3)
				var got []string
				right := false
				for _, h := range hits {
					op := h.Tool.Method + " " + h.Tool.Path
					got = append(got, op)
					for _, a := range task.answers {
						right = right || op == a
					}
				}
				if right {
					top++
				} else {
					t.Logf("%q: want %s; the first three are %s", task.task, strings.Join(task.answers, " or "), strings.Join(got, ", "))
				}
			}
			found += top
			total += len(tasks)
			table = append(table, fmt.Sprintf("%s: %d of %d in the top 3 (%d operations)", doc, top, len(tasks), len(cat.Tools)))
		})
	}
	if total == 0 {
		t.Fatal("no task was searched")
	}
	share := float64(found) / float64(total)
	t.Logf("search quality: %d of %d tasks (%.1f %%) have a right operation in the top 3\n%s", found, total, 100*share, strings.Join(table, "\n"))
	if share < 0.9 {
		t.Errorf("%.1f %% of the tasks have a right operation in the top 3; want at least 90 %%", 100*share)
	}
}
