package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Module is the module whose programs [Binary] builds.
const Module = "github.com/rubicon-go/rubicon"

// binaries holds what [Binary] built in this process, in a directory
// [Main] removes.
var binaries struct {
	mu    sync.Mutex
	dir   string // "" until the first build
	main  bool   // Main is running the tests
	built map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// Main runs a package's tests, as its TestMain calls it, and then removes
// the programs [Binary] built for them.
func Main(m *testing.M) {
	binaries.mu.Lock()
	binaries.main = true
	binaries.mu.Unlock()
	code := m.Run()
	binaries.mu.Lock()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	binaries.mu.Unlock()
	os.Exit(code)
}

// Binary returns the program of the module's package pkg ("cmd/toolgate"),
// built once per test process, whichever tests ask for it and however many
// run at once; a build that fails fails each test that asks. The package's
// TestMain must call [Main], which removes the program at the end.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	binaries.mu.Lock()
	if !binaries.main {
		binaries.mu.Unlock()
		t.Fatal("testkit.Binary needs the package's TestMain to call testkit.Main, which removes what it builds")
	}
	if binaries.built == nil {
		binaries.built = map[string]*build{}
	}
	b := binaries.built[pkg]
	if b == nil {
		b = &build{}
		binaries.built[pkg] = b
	}
	binaries.mu.Unlock()
	b.once.Do(func() { b.path, b.err = buildProgram(pkg) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// buildProgram builds pkg into the process's directory of programs.
func buildProgram(pkg string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	binaries.mu.Lock()
	if binaries.dir == "" {
		binaries.dir, err = os.MkdirTemp("", "rubicon-test-bin-")
		if err == nil {
			// Tests run the programs as other users too.
			err = os.Chmod(binaries.dir, 0o755)
		}
	}
	dir := binaries.dir
	binaries.mu.Unlock()
	if err != nil {
		return "", err
	}
	// Named as go build names it, so that what it prints of its own name
	// is what a person sees.
	bin := filepath.Join(dir, filepath.FromSlash(pkg), filepath.Base(pkg))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	// Built without -race, which go test does not pass on, so that the
	// programs start and run at their own speed.
	cmd := exec.Command("go", "build", "-o", bin, "./"+pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./%s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of the module's go.mod, above the test's
// working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			first, _ := bufio.NewReader(f).ReadString('\n')
			f.Close()
			if strings.TrimSpace(first) == "module "+Module {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod of " + Module + " above the working directory")
		}
		dir = parent
	}
}
