#!/usr/bin/env python3
"""TPC-H peers and answer checking for bench/tpch.sh.

Subcommands:
  peers  --parquet-dir D --query-dir Q --out-dir O [--runs N] [--queries 1,2,...]
         Runs each query (Q/qNN.sql, DataFusion dialect) on DataFusion (Python `datafusion`) and on
         DuckDB, both over the Parquet files D/<table>.parquet. Writes the answers to
         O/<engine>/qNN.tsv and appends "engine query seconds" lines (best of N runs, planning
         and fetching included) to O/times.tsv; a failed query gets O/<engine>/qNN.err.
  report --out-dir O [--queries 1,2,...]
         Checks O/orcinus/qNN.tsv and O/duckdb/qNN.tsv against O/datafusion/qNN.tsv (the oracle)
         row by row, and prints one markdown table: times, Orcinus/peer ratios, check results and
         totals. Exit status 1 if any Orcinus answer is missing or differs.

Comparison rule: rows in order (every query has a total ORDER BY); fields equal as text after
trimming trailing blanks, or both numeric and within 0.01 absolute or 1e-6 relative (MySQL and
DataFusion differ in DECIMAL division scale; TPC-H validation allows rounding differences).
"""

import argparse
import math
import os
import sys
import time

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]
ENGINES = ["orcinus", "datafusion", "duckdb"]


def query_numbers(text):
    return [int(x) for x in text.split(",") if x.strip()]


def read_query(query_dir, n):
    with open(os.path.join(query_dir, f"q{n:02d}.sql")) as f:
        lines = [ln for ln in f.read().splitlines() if not ln.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";")


def cell(v):
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_answer(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write("\t".join(cell(v) for v in row) + "\n")


def datafusion_runner(parquet_dir):
    import datafusion

    ctx = datafusion.SessionContext()
    for t in TABLES:
        ctx.register_parquet(t, os.path.join(parquet_dir, f"{t}.parquet"))

    def run(sql):
        batches = ctx.sql(sql).collect()
        rows = []
        for b in batches:
            cols = [c.to_pylist() for c in b.columns]
            rows.extend(zip(*cols))
        return rows

    return run


def duckdb_runner(parquet_dir):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:
        path = os.path.join(parquet_dir, f"{t}.parquet")
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{path}')")

    def run(sql):
        return con.execute(sql).fetchall()

    return run


def peers(args):
    runners = {"datafusion": datafusion_runner(args.parquet_dir), "duckdb": duckdb_runner(args.parquet_dir)}
    with open(os.path.join(args.out_dir, "times.tsv"), "a") as times:
        for engine, run in runners.items():
            os.makedirs(os.path.join(args.out_dir, engine), exist_ok=True)
            for n in query_numbers(args.queries):
                sql = read_query(args.query_dir, n)
                base = os.path.join(args.out_dir, engine, f"q{n:02d}")
                best, rows = math.inf, None
                try:
                    for _ in range(args.runs):
                        started = time.perf_counter()
                        rows = run(sql)
                        best = min(best, time.perf_counter() - started)
                except Exception as e:  # any engine failure is reported per query
                    with open(base + ".err", "w") as f:
                        f.write(" ".join(str(e).split()) + "\n")
                    continue
                write_answer(base + ".tsv", rows)
                times.write(f"{engine}\t{n}\t{best:.6f}\n")


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def fields_match(a, b):
    a, b = a.rstrip(), b.rstrip()
    if a == b:
        return True
    x, y = as_number(a), as_number(b)
    if x is None or y is None:
        return False
    diff = abs(x - y)
    return diff <= 0.01 or diff <= 1e-6 * max(abs(x), abs(y))


def compare(expected_path, actual_path):
    """None if the answers match, else a one-line reason."""
    if not os.path.exists(actual_path):
        err = actual_path[:-4] + ".err"
        if os.path.exists(err):
            with open(err) as f:
                text = " ".join(f.read().split())
            # The mariadb client echoes the failed query before its ERROR line.
            return "error: " + text[text.find("ERROR"):][:160] if "ERROR" in text else "error: " + text[:160]
        return "no answer"
    if not os.path.exists(expected_path):
        return "no oracle answer"
    with open(expected_path) as f:
        expected = f.read().splitlines()
    with open(actual_path) as f:
        actual = f.read().splitlines()
    if len(expected) != len(actual):
        return f"{len(actual)} rows, expected {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual), 1):
        ef, af = e.split("\t"), a.split("\t")
        if len(ef) != len(af):
            return f"row {i}: {len(af)} columns, expected {len(ef)}"
        for j, (x, y) in enumerate(zip(ef, af), 1):
            if not fields_match(x, y):
                return f"row {i} column {j}: {y!r}, expected {x!r}"
    return None


def report(args):
    times = {}
    path = os.path.join(args.out_dir, "times.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                engine, n, secs = line.split("\t")
                times[(engine, int(n))] = float(secs)
    print("| query | Orcinus s | DataFusion s | DuckDB s | Orcinus/DataFusion | Orcinus/DuckDB | Orcinus answer | DuckDB answer |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    totals = {e: 0.0 for e in ENGINES}
    complete = {e: True for e in ENGINES}
    failed = 0
    for n in query_numbers(args.queries):
        oracle = os.path.join(args.out_dir, "datafusion", f"q{n:02d}.tsv")
        checks = {}
        for engine in ("orcinus", "duckdb"):
            reason = compare(oracle, os.path.join(args.out_dir, engine, f"q{n:02d}.tsv"))
            checks[engine] = "ok" if reason is None else "DIFF " + reason.replace("|", "/")
        if checks["orcinus"] != "ok":
            failed += 1
        t = {e: times.get((e, n)) for e in ENGINES}
        for e in ENGINES:
            if t[e] is None:
                complete[e] = False
            else:
                totals[e] += t[e]

        def fmt(v):
            return "–" if v is None else f"{v:.3f}"

        def ratio(a, b):
            return "–" if a is None or b is None or b == 0 else f"{a / b:.1f}×"

        print(f"| Q{n:02d} | {fmt(t['orcinus'])} | {fmt(t['datafusion'])} | {fmt(t['duckdb'])} | "
              f"{ratio(t['orcinus'], t['datafusion'])} | {ratio(t['orcinus'], t['duckdb'])} | "
              f"{checks['orcinus']} | {checks['duckdb']} |")
    mark = {e: "" if complete[e] else " (incomplete)" for e in ENGINES}
    print(f"| total | {totals['orcinus']:.3f}{mark['orcinus']} | {totals['datafusion']:.3f}{mark['datafusion']} | "
          f"{totals['duckdb']:.3f}{mark['duckdb']} | "
          f"{totals['orcinus'] / totals['datafusion'] if totals['datafusion'] else 0:.1f}× | "
          f"{totals['orcinus'] / totals['duckdb'] if totals['duckdb'] else 0:.1f}× | "
          f"{len(query_numbers(args.queries)) - failed} ok | |")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    all_queries = ",".join(str(n) for n in range(1, 23))
    pp = sub.add_parser("peers")
    pp.add_argument("--parquet-dir", required=True)
    pp.add_argument("--query-dir", required=True)
    pp.add_argument("--out-dir", required=True)
    pp.add_argument("--runs", type=int, default=1)
    pp.add_argument("--queries", default=all_queries)
    pr = sub.add_parser("report")
    pr.add_argument("--out-dir", required=True)
    pr.add_argument("--queries", default=all_queries)
    args = p.parse_args()
    if args.command == "peers":
        if args.runs < 1:
            p.error("--runs must be >= 1")
        peers(args)
        return 0
    return report(args)


if __name__ == "__main__":
    sys.exit(main())
