// Package browsertest drives a real browser, Debian's headless Chromium,
// from Go tests, through the DevTools protocol (chromedp): pages are
// loaded, forms filled and sent as a person would, with the browser's own
// security rules in force.
//
// Chromium missing ends a test by testkit's rule: a skip that says how to
// install it, or a failure under $RUBICON_TEST_REQUIRE (as CI sets it).
// With $TOOLGATE_SCREENSHOTS
// naming a directory, [Screenshot] saves each page it is given there.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rubicon-go/rubicon/internal/testkit"
)

// ScreenshotsEnv names the directory where [Screenshot] saves pages.
const ScreenshotsEnv = "TOOLGATE_SCREENSHOTS"

// New starts a headless browser of its own for t, with a fresh profile,
// and returns the context that drives it; everything ends with t. Each
// action has 60 s.
func New(t testing.TB) context.Context {
	t.Helper()
	testkit.Long(t)
	path := testkit.Require(t, testkit.Chromium, "chromium", "chromium-browser", "google-chrome")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// Without these the browser calls home, and on a machine without
		// a network its connections are refused.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now, so that a broken one fails here and not in
	// the test's first step. The browser lives as long as the context of
	// this first run, which therefore has no timeout of its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// Do runs actions in the browser, in order, within 60 s.
func Do(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// Get runs action in the browser, within 60 s, and returns its value.
func Get[T any](t testing.TB, ctx context.Context, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Screenshot saves the whole of the current page as name.png in the
// directory $TOOLGATE_SCREENSHOTS names, if it names one.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		return
	}
	png := Get(t, ctx, chromedp.FullScreenshot(100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Load runs actions that load a page, such as a click on a link or on a
// form's button, waits for it, and returns its status.
func Load(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		t.Fatal(err)
	}
	return int(resp.Status)
}
