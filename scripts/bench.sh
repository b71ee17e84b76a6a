#!/usr/bin/env bash
# Runs the benchmarks (long measurements; not part of the test suite) and prints their tables.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
for b in build/bench/bench_*; do
  [ -x "$b" ] || continue
  echo "== $b"
  "$b" || echo "($b exited with $?)"
done
