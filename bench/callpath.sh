#!/usr/bin/env bash
# Lists the module's files that one `recall-archive run` chunk passes
# through, from the command line to the HTTP request and back, as
# docs/architecture.md counts them.
#
# recall-archive is built with coverage counters. Two sessions add two
# files to a batch and run it, with --workers 1, against a sandbox provider
# in another process: in "with", the files are two recordings (two chunks
# sent); in "without", a recording and its copy (one chunk sent). Only the
# run is counted. A file is on the chunk's path when its code runs more
# often in "with" than in "without"; the command line's files that parse
# and run the command are added to them.
#
# usage: bench/callpath.sh [SOURCE]   (default: this checkout; give another
#                                      checkout to measure it the same way)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(cd "${1:-.}" && pwd)
for tool in ffmpeg python3; do
  command -v $tool >/dev/null || { echo "callpath.sh: $tool is not installed" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$src" && go build -cover -covermode=atomic -coverpkg=github.com/rubicon-go/rubicon/... -o "$tmp/recall-archive" ./cmd/recall-archive)
(cd "$src" && go build -o "$tmp/sandbox" ./cmd/recall-archive)

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$tmp/sandbox" sandbox --addr "127.0.0.1:$port" >/dev/null &
sandbox=$!
trap 'kill $sandbox 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

mkdir -p "$tmp/with" "$tmp/without"
ffmpeg -hide_banner -loglevel error -f lavfi -i sine=frequency=300:duration=2 "$tmp/with/a.mp3"
ffmpeg -hide_banner -loglevel error -f lavfi -i sine=frequency=500:duration=2 "$tmp/with/b.mp3"
cp "$tmp/with/a.mp3" "$tmp/without/a.mp3"
cp "$tmp/with/a.mp3" "$tmp/without/b.mp3"
for s in with without; do
  mkdir -p "$tmp/cov-$s"
  export XDG_CACHE_HOME="$tmp/cache-$s"
  "$tmp/recall-archive" --db "$tmp/$s.db" add b "$tmp/$s" >/dev/null 2>&1
  GOCOVERDIR="$tmp/cov-$s" "$tmp/recall-archive" --db "$tmp/$s.db" run b --provider-url "http://127.0.0.1:$port" --workers 1 >/dev/null
  go tool covdata textfmt -i="$tmp/cov-$s" -o "$tmp/$s.txt"
done

python3 - "$tmp" <<'PY'
import collections, sys
tmp = sys.argv[1]
# The command line's files that parse and run `run`.
command_line = ["cmd/recall-archive/main.go", "recall/cli/cli.go", "internal/command/command.go",
                "recall/cli/run.go", "recall/cli/provider.go"]

def counts(session):
    c = collections.Counter()
    for line in open(f"{tmp}/{session}.txt"):
        if line.startswith("mode:"):
            continue
        where, statements, count = line.rsplit(" ", 2)
        path = where.split(":")[0].removeprefix("github.com/rubicon-go/rubicon/")
        c[path] += int(statements) * int(count)
    return c

with_call, without = counts("with"), counts("without")
for f in command_line:
    if with_call[f] == 0:
        sys.exit(f"callpath.sh: {f} did not run: the command line changed; update the list")
files = sorted(set(command_line) | {f for f in with_call if with_call[f] > without[f]})
packages = sorted({f.rsplit("/", 1)[0] if "/" in f else "." for f in files})
for f in files:
    print(f)
print(f"{len(files)} files in {len(packages)} packages: {' '.join(packages)}")
PY
