#!/usr/bin/env bash
# Functional sysbench matrix (not a benchmark): against an already running server, for each of
# the eight OLTP scripts: prepare, run at each thread count, cleanup; a run passes when sysbench
# exits 0 without FATAL. After oltp_read_write, bench/sysbench_check.py checks that every table
# still has TABLE_SIZE rows and every secondary index agrees with its table.
# Environment: PORT (26306), TABLES (4), TABLE_SIZE (100000), TIME (10), THREADS ("32 500"),
# WORKLOADS (the eight), HOST (127.0.0.1). The database sbtest must exist.
set -uo pipefail
cd "$(dirname "$0")/.."
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-26306}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
TIME=${TIME:-10}
THREADS=${THREADS:-"32 500"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only oltp_write_only oltp_read_write oltp_update_index oltp_update_non_index oltp_delete oltp_insert"}
LOG=${LOG:-$(mktemp /var/tmp/sysbench-matrix.XXXXXX)}
common=(--db-driver=mysql --mysql-host="$HOST" --mysql-port="$PORT" --mysql-user=root
        --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE")
status=0

step() { # workload command [threads]
    local out
    out=$(sysbench "$1" "${common[@]}" ${3:+--threads=$3 --time=$TIME} "$2" 2>&1)
    local rc=$?
    echo "$out" >>"$LOG"
    if [[ $rc -ne 0 ]] || grep -q FATAL <<<"$out"; then
        echo "| $1 | $2 | ${3:--} | FAIL (exit $rc) |"
        grep -m3 -E "FATAL|error" <<<"$out" | sed 's/^/    /'
        status=1
        return 1
    fi
    local tps
    tps=$(grep -oP 'transactions:\s+\d+\s+\(\K[0-9.]+' <<<"$out")
    local errs
    errs=$(grep -oP 'ignored errors:\s+\K\d+' <<<"$out")
    echo "| $1 | $2 | ${3:--} | ok${tps:+ ($tps tps, ${errs:-0} ignored errors)} |"
}

echo "| script | step | threads | result |"
echo "|---|---|---|---|"
for w in $WORKLOADS; do
    step "$w" prepare || continue
    for t in $THREADS; do
        step "$w" run "$t"
        if [[ $w == oltp_read_write ]]; then
            if python3 bench/sysbench_check.py "$HOST" "$PORT" "$TABLES" "$TABLE_SIZE" >>"$LOG" 2>&1; then
                echo "| $w | consistency check | $t | ok |"
            else
                echo "| $w | consistency check | $t | FAIL (see $LOG) |"
                status=1
            fi
        fi
    done
    step "$w" cleanup
done
echo "log: $LOG"
exit $status
