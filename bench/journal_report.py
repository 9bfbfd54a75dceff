#!/usr/bin/env python3
"""Summarises `make bench-journal` output: for each case, the median and the
range of pairs/s and of cpu-ms/pair over the runs, and, run by run, rubicon's
pairs/s over the sqlite3 baseline's one-worker pairs/s from the same run.

    python3 bench/journal_report.py bench-journal.out
"""

import re
import statistics
import sys

LINE = re.compile(r"^BenchmarkJournal/(\S+?)-\d+\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) cpu-ms/pair\s+([\d.]+) pairs/s")


def main(path):
    runs, current = [], {}
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        name, cpu, pairs = m.group(1), float(m.group(2)), float(m.group(3))
        if name in current:  # a new run starts
            runs.append(current)
            current = {}
        current[name] = (pairs, cpu)
    if current:
        runs.append(current)
    names = []
    for r in runs:
        names += [n for n in r if n not in names]
    print("%d runs\n" % len(runs))
    print("| case | pairs/s, median | range | CPU ms/pair, median |")
    print("|---|---|---|---|")
    for n in names:
        p = [r[n][0] for r in runs if n in r]
        c = [r[n][1] for r in runs if n in r]
        print("| %s | %.0f | %.0f – %.0f | %.3f |" % (n, statistics.median(p), min(p), max(p), statistics.median(c)))
    base = "sqlite3-baseline/workers-1"
    print("\n| ratio to the one-worker baseline of the same run | median | range |")
    print("|---|---|---|")
    for n in names:
        if n == base or not n.startswith(("rubicon-sqlite", "sqlite3")):
            continue
        q = [r[n][0] / r[base][0] for r in runs if n in r and base in r]
        print("| %s | %.2f | %.2f – %.2f |" % (n, statistics.median(q), min(q), max(q)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-journal.out")
