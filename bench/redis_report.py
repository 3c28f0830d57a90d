#!/usr/bin/env python3
"""Turns the raw cell results of bench/redis.sh into the markdown table it prints.

Input: a CSV file with rows `server,op,size,pipeline,round,qps,p99_ms` (servers: orcinus,
redis-always, redis-nopersist; ops: set, get, mix). Each cell's figure is the median over its
rounds. The ratio compares Orcinus with the peer that offers the same guarantee for that cell:
write cells (SET, 50/50 mix) against Redis with `appendfsync always` (target >= 1.0), read cells
(GET) against Redis with persistence off (target >= 0.8).

Two ratios are printed. "of medians" divides the two servers' median QPS. "paired" is the median
over rounds of Orcinus's QPS in a round divided by the peer's in the same round; the verdict
uses it. Why: the servers of one round run back to back, seconds apart, while a cell's rounds
are minutes apart, and this shared machine moves between fast and slow phases that last that
long. A slow phase that falls on one server's rounds but not the other's moves the ratio of
medians; a paired ratio compares the two under the same conditions. Example: 4 KiB GET at
pipeline 32, one run, Orcinus against Redis without persistence, rounds 1-5: 253k/264k,
253k/256k, 412k/413k, 402k/388k, 210k/380k. Ratio of medians 0.67 (253k/380k), paired 0.99.
A server that is slower in most rounds is still below target under either ratio.
"""

import csv
import statistics
import sys
from collections import defaultdict

SERVERS = ["orcinus", "redis-always", "redis-nopersist"]
OPS = ["set", "get", "mix"]
TARGETS = {"set": ("redis-always", 1.0), "mix": ("redis-always", 1.0), "get": ("redis-nopersist", 0.8)}


def size_label(size):
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def main(path):
    runs = defaultdict(list)
    # (op, size, pipeline) -> round -> server -> QPS, for the paired ratio.
    rounds_of = defaultdict(lambda: defaultdict(dict))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            cell = (row["op"], int(row["size"]), int(row["pipeline"]))
            runs[(row["server"], *cell)].append((float(row["qps"]), float(row["p99_ms"])))
            rounds_of[cell][row["round"]][row["server"]] = float(row["qps"])
    if not runs:
        sys.exit(f"{path}: no results")

    def paired(peer, op, size, pipeline):
        ratios = [
            r["orcinus"] / r[peer]
            for r in rounds_of[(op, size, pipeline)].values()
            if "orcinus" in r and r.get(peer, 0) > 0
        ]
        return statistics.median(ratios) if ratios else None

    def median(server, op, size, pipeline):
        cell = runs.get((server, op, size, pipeline))
        if not cell:
            return None
        return statistics.median(q for q, _ in cell), statistics.median(p for _, p in cell), len(cell)

    sizes = sorted({k[2] for k in runs})
    pipelines = sorted({k[3] for k in runs})
    print("| value | op | pipeline | Orcinus QPS | p99 ms | Redis always QPS | p99 ms "
          "| Redis no-persist QPS | p99 ms | ratio of medians | paired ratio | vs | target | |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    met = missed = 0
    for size in sizes:
        for op in OPS:
            for pipeline in pipelines:
                cells = {s: median(s, op, size, pipeline) for s in SERVERS}
                if all(c is None for c in cells.values()):
                    continue
                figures = []
                for s in SERVERS:
                    c = cells[s]
                    figures += ["-", "-"] if c is None else [f"{c[0]:,.0f}", f"{c[1]:.2f}"]
                peer, target = TARGETS[op]
                ratio, pair, verdict = "-", "-", ""
                if cells["orcinus"] and cells[peer] and cells[peer][0] > 0:
                    ratio = f"{cells['orcinus'][0] / cells[peer][0]:.3f}"
                r = paired(peer, op, size, pipeline)
                if r is not None:
                    pair = f"{r:.3f}"
                    verdict = "met" if r >= target else "MISSED"
                    met, missed = (met + 1, missed) if r >= target else (met, missed + 1)
                name = {"set": "SET", "get": "GET", "mix": "50/50"}[op]
                print(f"| {size_label(size)} | {name} | {pipeline} | " + " | ".join(figures)
                      + f" | {ratio} | {pair} | {peer} | {target:.1f} | {verdict} |")
    rounds = {len(v) for v in runs.values()}
    print()
    print(f"Medians of {'/'.join(map(str, sorted(rounds)))} rounds per cell; "
          f"targets met (paired ratio) in {met} of {met + missed} cells.")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: redis_report.py RESULTS.csv")
    main(sys.argv[1])
