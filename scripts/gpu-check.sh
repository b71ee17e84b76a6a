#!/usr/bin/env bash
# GPU check on a single-GPU machine: Release build with NCCL, the NCCL backend's GPU checks, the
# emulator conformance tests, the CLI's NCCL perf table and the backend overhead benchmark.
#
#   scripts/gpu-check.sh              # build in ./build-gpu
#   BUILD_DIR=/tmp/b scripts/gpu-check.sh
#
# Exit status: 0 when everything that ran passed, 1 otherwise. A missing GPU makes the GPU checks
# report SKIPPED (exit 77 of gpu_checks), which this script prints and counts as a failure only
# when REQUIRE_GPU=1 (set it on machines that are supposed to have one).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-gpu}"
jobs="$(nproc 2>/dev/null || echo 4)"
status=0

step() { printf '\n==== %s\n' "$*"; }

step "configure + build (Release, NCCL required) in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTWINCCL_WITH_NCCL=ON \
  -DTWINCCL_WARNINGS_AS_ERRORS=ON || exit 1
cmake --build "$build" -j "$jobs" || exit 1

step "GPUs"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi not available"

step "NCCL backend GPU checks (gpu_checks)"
"$build/backends/gpu_checks"
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "gpu_checks: SKIPPED (no GPU visible)"
  [ "${REQUIRE_GPU:-0}" = "1" ] && status=1
elif [ "$rc" -ne 0 ]; then
  echo "gpu_checks: FAILED (exit $rc)"
  status=1
fi

step "emulator conformance tests (ctest -L emu)"
ctest --test-dir "$build" -L emu --output-on-failure -j "$jobs" || status=1

step "CLI perf on NCCL"
cli="$build/cli/twinccl"
if [ -x "$cli" ]; then
  TWINCCL_BACKEND=nccl "$cli" perf --backend nccl || { echo "twinccl perf --backend nccl: FAILED"; status=1; }
else
  echo "SKIPPED: $cli was not built (the command-line program is not in this tree yet)"
fi

step "NCCL backend overhead (bench_nccl_overhead)"
bench="$build/bench/bench_nccl_overhead"
if [ -x "$bench" ]; then
  "$bench"
  rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && { echo "bench_nccl_overhead: FAILED (exit $rc)"; status=1; }
else
  echo "SKIPPED: $bench was not built"
fi

step "result: $([ "$status" -eq 0 ] && echo PASS || echo FAIL)"
exit "$status"
