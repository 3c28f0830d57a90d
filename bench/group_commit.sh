#!/usr/bin/env bash
# Group-commit throughput under sync=always: 1 committer vs 64 concurrent committers, each commit
# fdatasync'ed before it returns. Prints a markdown table and the ratio (target >= 20x).
# The data directory must be on a real disk (fsync on tmpfs is a no-op): default /var/tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${BENCH_DIR:-/var/tmp}
cargo build --release -q -p orcinus-storage --example group_commit
BIN=${CARGO_TARGET_DIR:-target}/release/examples/group_commit
"$BIN" --dir "$DIR" --seconds "${SECONDS_PER_ROUND:-5}" --rounds "${ROUNDS:-3}" --committers 1,64 --sync "${SYNC:-always}"
