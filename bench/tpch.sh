#!/usr/bin/env bash
# TPC-H side by side: Orcinus over the MySQL port vs DataFusion (Python) and DuckDB over Parquet
# files of the same data, same machine, same run. Steps: generate Parquet with tpchgen-cli; load
# the same scale factor into Orcinus with `orcinus tpch` (load time and rows/s reported); start
# the server; run the 22 MySQL-dialect queries (sql/tests/tpch/mysql) through the `mariadb` client;
# stop the server; run the DataFusion-dialect versions (sql/tests/tpch/oracle) on both peers; check
# every Orcinus answer against DataFusion's (bench/tpch_compare.py: row by row, numeric
# tolerance) and print a markdown table of times, ratios and checks with totals.
#
# One server process runs the queries in order, so a table's first scan decodes it into the
# analytical column cache and later queries read the cached columns (as any repeated workload
# would); an ORCINUS_CONFIG with `[mysql] analytics_column_cache_bytes = 0` measures without it.
#
# Q11's FRACTION is set to 0.0001/SF in both query sets (the files carry the SF 0.01 value).
# Orcinus times are wall-clock around one `mariadb` client run (client start-up included, a few
# ms); peer times are best of PEER_RUNS in-process runs, planning and fetch included.
#
# Environment: SF (1), RUNS: Orcinus runs per query, best taken (1), PEER_RUNS (1),
# QUERIES ("1 2 … 22"), ORCINUS_PORT (13316), ORCINUS_BIN (default: release build, built here),
# QUERY_TIMEOUT seconds per Orcinus query (1800), KEEP=1 keeps the work directory.
# Reuse across runs (loading SF 1 takes minutes): ORCINUS_DATA=DIR is the Orcinus data directory
# — loaded there with `orcinus tpch` when DIR does not exist yet, used as it is (no reload) when it
# does, never deleted; PARQUET_DIR=DIR likewise for the peers' Parquet files.
# ORCINUS_CONFIG=FILE passes a TOML configuration to the server (e.g. a larger block cache).
# Exit status 1 if any Orcinus answer is missing or differs from the oracle.
set -euo pipefail
cd "$(dirname "$0")/.."

SF=${SF:-1}
RUNS=${RUNS:-1}
PEER_RUNS=${PEER_RUNS:-1}
QUERIES=${QUERIES:-$(seq -s ' ' 1 22)}
ORCINUS_PORT=${ORCINUS_PORT:-13316}
QUERY_TIMEOUT=${QUERY_TIMEOUT:-1800}
WORK=$(mktemp -d /var/tmp/orcinus-tpch.XXXXXX)
OUT=$WORK/out
trap 'cleanup' EXIT

cleanup() {
    stop_orcinus
    if [[ "${KEEP:-0}" == 1 ]]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}

need() { command -v "$1" >/dev/null 2>&1; }
if ! need mariadb; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends mariadb-client >/dev/null
fi
if ! need tpchgen-cli || ! python3 -c 'import datafusion, duckdb' 2>/dev/null; then
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q tpchgen-cli datafusion duckdb
fi

if [[ -z "${ORCINUS_BIN:-}" ]]; then
    cargo build --release -q -p orcinus
    ORCINUS_BIN=${CARGO_TARGET_DIR:-target}/release/orcinus
fi

stop_orcinus() {
    if [[ -n "${ORCINUS_PID:-}" ]]; then
        kill "$ORCINUS_PID" 2>/dev/null && wait "$ORCINUS_PID" 2>/dev/null || true
        ORCINUS_PID=
    fi
}

wait_port() {
    for _ in $(seq 1 150); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        if ! kill -0 "$ORCINUS_PID" 2>/dev/null; then
            echo "orcinus exited during start-up:" >&2; cat "$WORK/orcinus.err" >&2; exit 1
        fi
        sleep 0.2
    done
    echo "server on port $1 did not start" >&2
    exit 1
}

now() { date +%s.%N; }

# Query files with Q11's FRACTION = 0.0001 / SF.
fraction=$(awk -v sf="$SF" 'BEGIN {printf "%.10f", 0.0001 / sf}')
for dialect in mysql oracle; do
    mkdir -p "$WORK/queries/$dialect"
    for f in sql/tests/tpch/$dialect/q[0-9][0-9].sql; do
        sed "s/\* 0\.0100000000/* $fraction/" "$f" >"$WORK/queries/$dialect/$(basename "$f")"
    done
done
mkdir -p "$OUT/orcinus"
: >"$OUT/times.tsv"

PARQUET_DIR=${PARQUET_DIR:-$WORK/parquet}
if [[ -d "$PARQUET_DIR" ]]; then
    echo "using the Parquet files in $PARQUET_DIR" >&2
else
    echo "generating Parquet (SF $SF) with tpchgen-cli ..." >&2
    tpchgen-cli parquet -s "$SF" --output-dir "$PARQUET_DIR" >/dev/null
fi

ORCINUS_DATA=${ORCINUS_DATA:-$WORK/orcinus}
if [[ -d "$ORCINUS_DATA" ]]; then
    echo "using the Orcinus data directory $ORCINUS_DATA (not reloaded)" >&2
    load_secs="(reused)"
    load_line="data directory $ORCINUS_DATA reused"
else
    echo "loading SF $SF into Orcinus ..." >&2
    load_start=$(now)
    # `orcinus tpch` writes only to stderr (progress, summary, logs).
    "$ORCINUS_BIN" tpch --sf "$SF" --data-dir "$ORCINUS_DATA" 2>&1 | tee "$WORK/load.err" >&2
    load_secs=$(awk -v a="$load_start" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
    load_line=$(grep -a '^loaded TPC-H' "$WORK/load.err" | tail -1 || true)
fi

config_args=()
[[ -n "${ORCINUS_CONFIG:-}" ]] && config_args=(--config "$ORCINUS_CONFIG")
"$ORCINUS_BIN" "${config_args[@]}" --data-dir "$ORCINUS_DATA" --mysql-port "$ORCINUS_PORT" --redis-port 0 \
    >"$WORK/orcinus.out" 2>"$WORK/orcinus.err" &
ORCINUS_PID=$!
wait_port "$ORCINUS_PORT"

for n in $QUERIES; do
    q=$(printf 'q%02d' "$n")
    best=
    for _ in $(seq 1 "$RUNS"); do
        start=$(now)
        if timeout "$QUERY_TIMEOUT" mariadb -h127.0.0.1 -P"$ORCINUS_PORT" -uroot tpch \
            --batch --raw --skip-column-names <"$WORK/queries/mysql/$q.sql" \
            >"$OUT/orcinus/$q.tsv" 2>"$OUT/orcinus/$q.err"; then
            secs=$(awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.6f", b - a}')
            best=$(awk -v a="${best:-$secs}" -v b="$secs" 'BEGIN {print (b < a ? b : a)}')
            rm -f "$OUT/orcinus/$q.err"
        else
            [[ -s "$OUT/orcinus/$q.err" ]] || echo "timed out after ${QUERY_TIMEOUT}s" >"$OUT/orcinus/$q.err"
            rm -f "$OUT/orcinus/$q.tsv"
            best=
            break
        fi
    done
    [[ -n "$best" ]] && printf 'orcinus\t%d\t%s\n' "$n" "$best" >>"$OUT/times.tsv"
    echo "Q$n: orcinus ${best:-failed}" >&2
done
stop_orcinus

echo "running DataFusion and DuckDB over Parquet ..." >&2
query_list=$(tr ' ' ',' <<<"$QUERIES")
python3 bench/tpch_compare.py peers --parquet-dir "$PARQUET_DIR" --query-dir "$WORK/queries/oracle" \
    --out-dir "$OUT" --runs "$PEER_RUNS" --queries "$query_list"

echo
echo "TPC-H SF $SF on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ); Orcinus load: ${load_secs} s wall (${load_line:-no summary line})"
echo
status=0
python3 bench/tpch_compare.py report --out-dir "$OUT" --queries "$query_list" || status=$?
exit "$status"
