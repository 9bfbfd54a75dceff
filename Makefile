# rubicon's developer commands. `make test` is what CI runs.
GO ?= go
# An execution count, not a duration: Go 1.26's fuzz coordinator can report a
# spurious "context deadline exceeded" when a -fuzztime duration runs out
# (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 150000x
BENCHCOUNT ?= 10

# Packages tested at once by make test: more than the cores, since the
# long suites mostly wait on real processes, sockets and leases.
TESTP ?= 4

.PHONY: check test test-main test-prism test-bench test-sdks lint release release-check fuzz bench bench-instructions bench-journal bench-hash bench-toolgate callpath soak behaviour demo screenshots

## check: the loop to run after each change: lint, and the tests under
## -short, which leave out the long real-process suites (testkit.Long:
## SIGKILL crash tests, concurrent runs, worker processes, browsers, Node
## clients).
check: lint
	$(GO) test -short -count=1 -p $(TESTP) ./...

## test: lint, then side by side: the whole test suite under the race
## detector, Prism's judging of toolgate's requests (without it: its Go
## side is one caller sending one request at a time, and under the race
## detector it cost 40 s of CPU more), the comparison module's tests, the
## vendor SDKs' matrix, a short fuzzing run (one worker per target, a
## third of make fuzz's executions) and a release build, run.
test: lint
	$(MAKE) -j6 --output-sync=target test-main test-prism test-bench test-sdks release-check fuzz FUZZFLAGS=-parallel=1 FUZZTIME=$(TESTFUZZTIME)

TESTFUZZTIME ?= 50000x
PRISMTEST = ^TestPrismFindsEveryRequestValid$$

test-main:
	$(GO) test -race -p $(TESTP) -timeout 30m -skip '$(PRISMTEST)' ./...

test-prism:
	$(GO) test -timeout 30m -run '$(PRISMTEST)' ./toolgate

test-bench:
	cd bench && $(GO) test -race ./...

test-sdks:
	cd sdks && $(GO) test -race ./...

## release: both programs for linux, darwin and windows on amd64 and
## arm64 in dist/, with VERSION (a semver tag; default: git describe)
## stamped in, and dist/SHA256SUMS.
release:
	GO=$(GO) scripts/release.sh

## release-check: a release build for this machine, run.
release-check:
	GO=$(GO) scripts/release_check.sh

## lint: formatting, tidy go.mod files and go vet, in every module.
lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	cd bench && $(GO) mod tidy -diff
	cd sdks && $(GO) mod tidy -diff
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd sdks && $(GO) vet ./...

## fuzz: run each fuzz target for FUZZTIME.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseRetryAfter$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./retry
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./toolgate/spec
	$(GO) test -run '^$$' -fuzz '^FuzzSchema$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./toolgate/spec
	$(GO) test -run '^$$' -fuzz '^FuzzECMAPattern$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./toolgate/spec
	$(GO) test -run '^$$' -fuzz '^FuzzScanMatchesConversion$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./toolgate/spec

## bench: success-path overhead against bare net/http and go-retryablehttp,
## BENCHCOUNT interleaved runs into bench.out (compare with benchstat).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./retry
	cd bench && $(GO) test -c -o bench.test . && \
	  for i in $$(seq $(BENCHCOUNT)); do ./bench.test -test.run '^$$' -test.bench . -test.benchmem; done | tee ../bench.out

## bench-instructions: instructions per request, counted by callgrind.
bench-instructions:
	bench/instructions.sh

## bench-journal: durable sending-and-outcome pairs per second, rubicon's
## journal on SQLite and PostgreSQL and, in the same runs, the sqlite3
## baseline (bench/journal_baseline.py, python3); JOURNALCOUNT interleaved
## runs into bench-journal.out.
JOURNALCOUNT ?= 5
bench-journal:
	cd bench && $(GO) test -c -o bench.test . && \
	  for i in $$(seq $(JOURNALCOUNT)); do ./bench.test -test.run '^$$' -test.bench '^BenchmarkJournal$$' -test.benchtime 3000x; done | tee ../bench-journal.out

## bench-hash: recall-archive's hashing against openssl on the same 1 GiB.
bench-hash:
	$(GO) test -run '^$$' -bench Hash -benchtime 5x -count 3 ./recall

## bench-toolgate: toolgate serve's cold start on GitHub's, Kubernetes' and
## Stripe's descriptions in tools and search mode (Kubernetes' also served
## by a Node peer, installed into .cache/npm from the npm registry when
## missing), what finding and calling one operation costs in search mode,
## and a tool call's overhead against calling the upstream directly.
PEER = @ivotoby/openapi-mcp-server@1.16.1
bench-toolgate:
	@grep -qs '"version": "1.16.1"' .cache/npm/node_modules/@ivotoby/openapi-mcp-server/package.json || \
		npm install --prefix .cache/npm --no-audit --no-fund --silent --ignore-scripts --no-save $(PEER)
	$(GO) test -run '^$$' -bench 'ColdStart' -benchtime 20x -count 3 ./cmd/toolgate
	$(GO) test -run '^$$' -bench 'FindAndCall' -benchtime 3x ./cmd/toolgate
	$(GO) test -run '^$$' -bench '^BenchmarkCall$$' -benchtime 3000x -count 3 ./cmd/toolgate

## callpath: the files one recall-archive run chunk passes through, as
## docs/architecture.md counts them (bench/callpath.sh; ffmpeg, python3).
callpath:
	bench/callpath.sh

## soak: the crash test with SOAKRUNS random kill points per backend.
SOAKRUNS ?= 1000
soak:
	RUBICON_SOAK_RUNS=$(SOAKRUNS) $(GO) test -run TestCrashLeavesOnlyAmbiguity -count 1 -timeout 2h -v ./sqlstore

## behaviour: duplicate side effects under injected faults, rubicon against
## go-retryablehttp.
behaviour:
	cd bench && $(GO) test -run TestBehaviourTable -v -count 1 .

## screenshots: the console's pages, as the browser tests see them, saved
## to docs/console for the README.
screenshots:
	RUBICON_TEST_REQUIRE=chromium TOOLGATE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run '^TestBrowser' ./toolgate/consoleui ./recall/consoleui

## demo: the quick start's first command.
demo:
	$(GO) run ./examples/boundary
