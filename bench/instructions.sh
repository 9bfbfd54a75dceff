#!/usr/bin/env bash
# Counts the instructions the client process executes per request, for
# each client and request kind, with valgrind's callgrind. Unlike wall or
# CPU time, the count repeats exactly from run to run and ignores whatever
# else the machine is doing. The server runs in a child process that
# callgrind does not follow, so only the client's work is counted.
#
# Each benchmark runs at two iteration counts; the difference divided by
# the difference in iterations is the cost of one request, with start-up
# and set-up cancelled out.
#
# Go's preemption signals are turned off, and the server is started once
# outside callgrind: callgrind can trip over signals.
#
# usage: bench/instructions.sh [LOW HIGH]      (default 500 2500)
set -euo pipefail
cd "$(dirname "$0")"
low=${1:-500}
high=${2:-2500}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .

# One server for every run, outside callgrind.
coproc server { RUBICON_BENCH_SERVER=1 exec "$tmp/bench.test"; }
read -r url <&"${server[0]}"
export RUBICON_BENCH_URL=$url
trap 'kill "$server_PID" 2>/dev/null; rm -rf "$tmp"' EXIT

count() { # benchmark, iterations -> instructions
  GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
    "$tmp/bench.test" -test.run '^$' -test.bench "^$1\$" -test.benchtime "$2x" -test.cpu 1 >"$tmp/log" 2>&1 \
    || { cat "$tmp/log" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/log"
}

printf '%-34s %14s %10s\n' benchmark instr/request vs_bare
for kind in GET POST64K; do
  base=""
  for client in bare rubicon retryablehttp bare_deadline rubicon_deadline; do
    lo=$(count "Benchmark$kind/$client" "$low")
    hi=$(count "Benchmark$kind/$client" "$high")
    per=$(( (hi - lo) / (high - low) ))
    case $client in
      bare|bare_deadline) base=$per; ratio="1.000" ;;
      *) ratio=$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.3f", a / b }') ;;
    esac
    printf '%-34s %14d %10s\n' "$kind/$client" "$per" "$ratio"
  done
done
