#!/usr/bin/env bash
# sysbench OLTP side by side: Orcinus vs Debian's MariaDB (innodb_flush_log_at_trx_commit=1), same
# machine, same run. For each workload: prepare, run, cleanup against each server; prints QPS, p95
# latency and the Orcinus/MariaDB QPS ratio as a markdown table, then the 500-thread read_write check.
#
# Servers are pinned to CPU 1 and sysbench to CPU 0 (taskset) so runs repeat on a 2-core machine.
# Environment: TABLES (4), TABLE_SIZE (100000), TIME (30 s per run), THREADS ("32"),
# WORKLOADS (the issue's eight), ROUNDS (1; medians when > 1, the servers alternating round by
# round), HIGH_THREADS (500; the extra oltp_read_write run, empty or 0 to skip it),
# ORCINUS_BIN (skip the release build and run this binary).
set -euo pipefail
cd "$(dirname "$0")/.."

TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
TIME=${TIME:-30}
THREADS=${THREADS:-32}
HIGH_THREADS=${HIGH_THREADS-500}
[[ "$HIGH_THREADS" == 0 ]] && HIGH_THREADS=""
ROUNDS=${ROUNDS:-1}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only oltp_write_only oltp_read_write oltp_update_index oltp_update_non_index oltp_delete oltp_insert"}
ORCINUS_PORT=${ORCINUS_PORT:-13306}
MARIADB_PORT=${MARIADB_PORT:-13307}
WORK=$(mktemp -d /var/tmp/orcinus-sysbench.XXXXXX)
trap 'cleanup' EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need sysbench || ! need mariadbd || ! need mariadb; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends sysbench mariadb-server mariadb-client >/dev/null
fi

cleanup() {
    [[ -n "${ORCINUS_PID:-}" ]] && kill "$ORCINUS_PID" 2>/dev/null && wait "$ORCINUS_PID" 2>/dev/null
    [[ -n "${MARIADB_PID:-}" ]] && kill "$MARIADB_PID" 2>/dev/null && wait "$MARIADB_PID" 2>/dev/null
    rm -rf "$WORK"
}

start_orcinus() {
    local bin=${ORCINUS_BIN:-}
    if [[ -z "$bin" ]]; then
        cargo build --release -q -p orcinus
        bin=${CARGO_TARGET_DIR:-target}/release/orcinus
    fi
    taskset -c 1 "$bin" --data-dir "$WORK/orcinus" --mysql-port "$ORCINUS_PORT" --redis-port 0 \
        >"$WORK/orcinus.out" 2>"$WORK/orcinus.err" &
    ORCINUS_PID=$!
    wait_port "$ORCINUS_PORT"
    mariadb -h127.0.0.1 -P"$ORCINUS_PORT" -uroot -e "CREATE DATABASE sbtest"
}

start_mariadb() {
    mkdir -p "$WORK/mariadb"
    mariadb-install-db --no-defaults --datadir="$WORK/mariadb" --user=root --auth-root-authentication-method=normal >/dev/null
    taskset -c 1 mariadbd --no-defaults --datadir="$WORK/mariadb" --user=root --port="$MARIADB_PORT" \
        --bind-address=127.0.0.1 --socket="$WORK/mariadb.sock" --innodb-flush-log-at-trx-commit=1 \
        --innodb-buffer-pool-size=2G --max-connections=1000 --max-prepared-stmt-count=1048576 --skip-log-bin \
        >"$WORK/mariadb.out" 2>&1 &
    MARIADB_PID=$!
    wait_port "$MARIADB_PORT"
    # mariadb-install-db creates anonymous accounts (''@localhost, ''@host) that would match
    # sysbench's 127.0.0.1 connection before 'sbtest'@'%' does, so drop them.
    mariadb -h127.0.0.1 -P"$MARIADB_PORT" -uroot -e "DROP USER IF EXISTS ''@'localhost'; DROP USER IF EXISTS ''@'$(hostname)'; CREATE DATABASE sbtest; CREATE USER IF NOT EXISTS 'sbtest'@'%'; GRANT ALL ON sbtest.* TO 'sbtest'@'%'"
}

wait_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.2
    done
    echo "server on port $1 did not start" >&2
    exit 1
}

# run_one PORT USER WORKLOAD THREADS -> prints "qps p95"
run_one() {
    local port=$1 user=$2 workload=$3 threads=$4
    local common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user="$user"
        --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE")
    taskset -c 0 sysbench "$workload" "${common[@]}" --threads=8 prepare >/dev/null
    local out
    if ! out=$(taskset -c 0 sysbench "$workload" "${common[@]}" --threads="$threads" --time="$TIME" \
        --report-interval=0 --percentile=95 run 2>&1); then
        # A failed run is reported, not fatal: its cell shows "failed" and the matrix goes on.
        echo "sysbench $workload at $threads threads against port $port failed:" >&2
        tail -n 5 <<<"$out" >&2
        taskset -c 0 sysbench "$workload" "${common[@]}" cleanup >/dev/null 2>&1 || true
        echo "failed failed"
        return 0
    fi
    taskset -c 0 sysbench "$workload" "${common[@]}" cleanup >/dev/null
    local qps p95
    qps=$(awk '/queries:/ {gsub(/[()]/,"",$3); print $3; exit}' <<<"$out")
    p95=$(awk '/95th percentile:/ {print $3; exit}' <<<"$out")
    echo "$qps $p95"
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure_pair WORKLOAD THREADS -> "orcinus_qps orcinus_p95 mariadb_qps mariadb_p95" (medians).
# Rounds alternate between the servers (Orcinus, MariaDB, Orcinus, ...) so that a noisy stretch
# of the shared machine falls on both rather than on all rounds of one.
measure_pair() {
    local oq=() op=() mq=() mp=() q p
    for _ in $(seq 1 "$ROUNDS"); do
        read -r q p < <(run_one "$ORCINUS_PORT" root "$@")
        oq+=("$q"); op+=("$p")
        read -r q p < <(run_one "$MARIADB_PORT" sbtest "$@")
        mq+=("$q"); mp+=("$p")
    done
    echo "$(medians "${oq[@]}") $(medians "${op[@]}") $(medians "${mq[@]}") $(medians "${mp[@]}")"
}

# medians VALUE... -> the median, or "failed" if any round failed.
medians() {
    local v
    for v in "$@"; do [[ "$v" == failed ]] && { echo failed; return 0; }; done
    printf '%s\n' "$@" | median
}

start_orcinus
start_mariadb
echo "| workload | threads | Orcinus QPS | Orcinus p95 ms | MariaDB QPS | MariaDB p95 ms | QPS ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
declare -A ORC_RW
for threads in $THREADS $HIGH_THREADS; do
    for w in $WORKLOADS; do
        [[ "$threads" == "$HIGH_THREADS" && "$w" != oltp_read_write ]] && continue
        read -r oq op mq mp < <(measure_pair "$w" "$threads")
        ratio=n/a
        if [[ "$oq" != failed && "$mq" != failed ]]; then
            ratio=$(awk -v a="$oq" -v b="$mq" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
        fi
        echo "| $w | $threads | $oq | $op | $mq | $mp | $ratio |"
        [[ "$w" == oltp_read_write && "$oq" != failed ]] && ORC_RW[$threads]=$oq
    done
done
if [[ -n "$HIGH_THREADS" && -n "${ORC_RW[$HIGH_THREADS]:-}" && -n "${ORC_RW[${THREADS%% *}]:-}" ]]; then
    awk -v hi="${ORC_RW[$HIGH_THREADS]}" -v lo="${ORC_RW[${THREADS%% *}]}" -v t="$HIGH_THREADS" \
        'BEGIN {printf "\noltp_read_write at %s threads: %.0f%% of the 32-thread QPS (target >= 80%%)\n", t, 100 * hi / lo}'
fi
