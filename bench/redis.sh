#!/usr/bin/env bash
# RESP throughput and p99 of Orcinus against Redis, in the same run on the same machine:
#   - Orcinus (release build, default settings: sync=always, every write fdatasync'ed before
#     its reply);
#   - Debian's redis-server with `appendonly yes appendfsync always` (same durability);
#   - Debian's redis-server with persistence off (`save "" appendonly no`).
# Cells: value sizes 128 B, 1 KiB, 4 KiB, 16 KiB x SET, GET, 50/50 mix x no pipeline and
# pipeline 32, with 32 connections, keys drawn at random from KEYSPACE keys. Each cell runs ROUNDS
# times per server (rounds interleave the servers) and reports the median QPS and median p99.
# Five rounds by default: on this shared 2-core machine one server's rounds of a cell can span a
# third of their median (Redis-always's 128-byte pipelined SETs: 477k-587k in one run), so the
# median of three still moved cells across their target from run to run.
# Ratios: Orcinus / Redis-always for write cells (SET, mix; target >= 1.0), Orcinus /
# Redis-nopersist for read cells (GET; target >= 0.8), both as the ratio of the medians and as
# the median of per-round ratios (each round's servers run seconds apart); the verdict uses the
# per-round one (bench/redis_report.py says why). Prints a markdown table.
#
# Load generator: redis-benchmark --csv (it reports p99). It cannot mix commands in one run, so a
# 50/50 cell runs a SET and a GET benchmark at the same time, 16 + 16 connections, N/2 requests
# each; its QPS is N divided by the longer of the two runs (the time to finish the whole mixed
# workload) and its p99 the larger of the two p99s. Before the GET and mix cells of a value size,
# every key of the keyspace is preloaded (bench/redis_preload.py) so no GET misses.
#
# Quiet start: before each cell, the script waits (at most QUIET_MAX_S, default 60 s) until the
# three servers and their child processes together use under 6% of a CPU over half a second. All
# servers share SERVER_CPU, so otherwise one server's leftover background work -- Redis's AOF
# rewrite child (auto-aof-rewrite at 64 MB), Orcinus's memtable flushes and compactions -- runs
# during the next server's cell and is charged to it. Work a server does during its own cell still
# counts against it.
#
# Pinning: servers on SERVER_CPU (default 1), redis-benchmark on CLIENT_CPU (default 0), so on a
# 2-core machine each server gets one core (Orcinus's threads all share it). Data dirs go under
# BENCH_DIR (default /var/tmp: fsync on tmpfs is a no-op, so it must be a real disk).
#
# Scale with env vars: ROUNDS (5), SIZES ("128 1024 4096 16384"), PIPELINES ("1 32"), OPS ("set get mix"),
# REQUESTS (50000, per cell without pipelining), PIPELINED_REQUESTS (200000), CLIENTS (32),
# KEYSPACE (10000), REDIS_PORTS ("17380 17381"), ORCINUS_BIN (skip the release build).
# Raw results are kept in $BENCH_DIR/orcinus-redis-bench.*/results.csv.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-"128 1024 4096 16384"}
PIPELINES=${PIPELINES:-"1 32"}
OPS=${OPS:-"set get mix"}
# Sustained runs (about 1-3 s per cell, not 0.02-0.3 s): long enough that Orcinus's memtable
# flushes and compactions and Redis's AOF growth happen inside the measured window, and that
# connection set-up and the first sync do not dominate.
REQUESTS=${REQUESTS:-50000}
PIPELINED_REQUESTS=${PIPELINED_REQUESTS:-200000}
CLIENTS=${CLIENTS:-32}
KEYSPACE=${KEYSPACE:-10000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BENCH_DIR=${BENCH_DIR:-/var/tmp}
read -r REDIS_ALWAYS_PORT REDIS_NOPERSIST_PORT <<<"${REDIS_PORTS:-17380 17381}"

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-benchmark >/dev/null || need+=(redis-tools)
command -v taskset >/dev/null || need+=(util-linux)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
    echo "bench: installing ${need[*]}" >&2
    sudo=""
    [[ "$(id -u)" == 0 ]] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

if [[ -z "${ORCINUS_BIN:-}" ]]; then
    cargo build --release -q -p orcinus
    ORCINUS_BIN=${CARGO_TARGET_DIR:-target}/release/orcinus
fi

WORK=$(mktemp -d "$BENCH_DIR/orcinus-redis-bench.XXXXXX")
RESULTS=$WORK/results.csv
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK/orcinus" "$WORK/redis-always" "$WORK/redis-nopersist"
}
trap cleanup EXIT

wait_for_ping() { # port pid name
    local i
    for i in $(seq 600); do
        [[ "$(redis-cli -p "$1" PING 2>/dev/null)" == PONG ]] && return 0
        kill -0 "$2" 2>/dev/null || { echo "bench: $3 exited; see $WORK/$3.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "bench: $3 does not answer PING on port $1" >&2
    exit 1
}

start_redis() { # name port extra-args...
    local name=$1 port=$2
    shift 2
    mkdir -p "$WORK/$name"
    taskset -c "$SERVER_CPU" redis-server --port "$port" --bind 127.0.0.1 --dir "$WORK/$name" \
        --daemonize no "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    wait_for_ping "$port" $! "$name"
}

start_orcinus() {
    taskset -c "$SERVER_CPU" "$ORCINUS_BIN" --data-dir "$WORK/orcinus" --mysql-port 0 \
        --redis-port 0 >"$WORK/orcinus.out" 2>"$WORK/orcinus.log" &
    PIDS+=($!)
    local i
    for i in $(seq 600); do
        ORCINUS_PORT=$(sed -n 's/^redis listening on .*:\([0-9]*\)$/\1/p' "$WORK/orcinus.out")
        [[ -n "$ORCINUS_PORT" ]] && break
        sleep 0.1
    done
    [[ -n "$ORCINUS_PORT" ]] || { echo "bench: orcinus did not start; see $WORK/orcinus.log" >&2; exit 1; }
    wait_for_ping "$ORCINUS_PORT" $! orcinus
}

start_orcinus
start_redis redis-always "$REDIS_ALWAYS_PORT" --save "" --appendonly yes --appendfsync always
start_redis redis-nopersist "$REDIS_NOPERSIST_PORT" --save "" --appendonly no
declare -A PORT=([orcinus]=$ORCINUS_PORT [redis-always]=$REDIS_ALWAYS_PORT
    [redis-nopersist]=$REDIS_NOPERSIST_PORT)
SERVERS=(orcinus redis-always redis-nopersist)

# CPU ticks used so far by the servers and their live children (exited children count in
# their parent's cutime/cstime).
server_ticks() {
    local pid total=0 child
    for pid in "${PIDS[@]}"; do
        [[ -r /proc/$pid/stat ]] || continue
        total=$((total + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pid/stat")))
        for child in $(pgrep -P "$pid" || true); do
            total=$((total + $(awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null || echo 0)))
        done
    done
    echo "$total"
}

# Waits until the servers are idle (see "Quiet start").
wait_quiet() {
    local started=$SECONDS before after hz
    hz=$(getconf CLK_TCK)
    while ((SECONDS - started < ${QUIET_MAX_S:-60})); do
        before=$(server_ticks)
        sleep 0.5
        after=$(server_ticks)
        # Under 6% of one CPU over 0.5 s.
        if ((100 * (after - before) < 3 * hz)); then
            ((SECONDS - started < 2)) || echo "bench: waited $((SECONDS - started)) s for idle servers" >&2
            return 0
        fi
    done
    echo "bench: servers still busy after ${QUIET_MAX_S:-60} s; measuring anyway" >&2
}

# One redis-benchmark run; prints "qps p99_ms".
run_benchmark() { # port test requests clients pipeline size
    taskset -c "$CLIENT_CPU" redis-benchmark -h 127.0.0.1 -p "$1" -t "$2" -n "$3" -c "$4" \
        -P "$5" -d "$6" -r "$KEYSPACE" --csv |
        awk -F'","' -v t="${2^^}" '$1 == "\"" t { print $2, $7 }'
}

run_cell() { # server op size pipeline requests; prints "qps p99_ms"
    local port=${PORT[$1]} op=$2 size=$3 pipeline=$4 n=$5
    if [[ $op != mix ]]; then
        run_benchmark "$port" "$op" "$n" "$CLIENTS" "$pipeline" "$size"
        return
    fi
    local half=$((n / 2)) conns=$((CLIENTS / 2))
    run_benchmark "$port" set "$half" "$conns" "$pipeline" "$size" >"$WORK/mix-set" &
    run_benchmark "$port" get "$half" "$conns" "$pipeline" "$size" >"$WORK/mix-get"
    wait $!
    read -r set_qps set_p99 <"$WORK/mix-set"
    read -r get_qps get_p99 <"$WORK/mix-get"
    awk -v n="$n" -v h="$half" -v sq="$set_qps" -v gq="$get_qps" -v sp="$set_p99" -v gp="$get_p99" \
        'BEGIN { ts = h / sq; tg = h / gq; t = ts > tg ? ts : tg; printf "%.2f %s\n", n / t, (sp > gp ? sp : gp) }'
}

echo "server,op,size,pipeline,round,qps,p99_ms" >"$RESULTS"
echo "bench: $ROUNDS rounds; results in $RESULTS" >&2
for size in $SIZES; do
    for server in "${SERVERS[@]}"; do
        python3 bench/redis_preload.py "$KEYSPACE" "$size" |
            redis-cli -p "${PORT[$server]}" --pipe >/dev/null
    done
    for pipeline in $PIPELINES; do
        n=$REQUESTS
        ((pipeline > 1)) && n=$PIPELINED_REQUESTS
        for round in $(seq "$ROUNDS"); do
            for op in $OPS; do
                for server in "${SERVERS[@]}"; do
                    wait_quiet
                    read -r qps p99 < <(run_cell "$server" "$op" "$size" "$pipeline" "$n")
                    [[ -n "${qps:-}" ]] || { echo "bench: no result for $server $op $size" >&2; exit 1; }
                    echo "$server,$op,$size,$pipeline,$round,$qps,$p99" >>"$RESULTS"
                    echo "bench: $server $op ${size}B P$pipeline round $round: $qps QPS, p99 $p99 ms" >&2
                done
            done
        done
    done
done

problems=$(grep -cE ' (WARN|ERROR) |panicked' "$WORK/orcinus.log" || true)
echo
echo "Orcinus $("$ORCINUS_BIN" --version 2>/dev/null || echo '?'), $(redis-server --version | cut -d' ' -f1-3);"
echo "$CLIENTS connections, keyspace $KEYSPACE, $REQUESTS requests per cell ($PIPELINED_REQUESTS pipelined);"
echo "servers on CPU $SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU; Orcinus logged $problems warnings/errors."
echo
python3 bench/redis_report.py "$RESULTS"
