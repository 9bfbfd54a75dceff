#!/usr/bin/env bash
# Checks that a release build runs: builds both programs for this machine
# with scripts/release.sh, runs each one's --version, and checks the sums.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
version=v0.0.0-check+$(git rev-parse --short=12 HEAD 2>/dev/null || echo nogit)
platform=$("$GO" env GOOS)/$("$GO" env GOARCH)
VERSION=$version PLATFORMS=$platform OUT=$out scripts/release.sh >/dev/null
for cmd in recall-archive toolgate; do
  bin=$(ls "$out/$cmd-$version-"*)
  got=$("$bin" --version)
  case $got in
    "$cmd $version "*) echo "release-check: $got" ;;
    *) echo "release-check: $bin --version says \"$got\", want \"$cmd $version ...\"" >&2; exit 1 ;;
  esac
done
(cd "$out" && sha256sum --quiet -c SHA256SUMS)
echo "release-check: SHA256SUMS holds"

# The README's install line, from this checkout instead of the module
# proxy: both programs land in GOBIN and say their version.
GOBIN="$out/bin" "$GO" install ./cmd/...
for cmd in recall-archive toolgate; do
  got=$("$out/bin/$cmd" version)
  case $got in
    "$cmd "*) echo "release-check: go install: $got" ;;
    *) echo "release-check: $cmd version after go install says \"$got\"" >&2; exit 1 ;;
  esac
done
