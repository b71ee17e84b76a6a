#!/usr/bin/env bash
# GPU check on a single-GPU machine: Release build with NCCL, the NCCL backend's GPU checks, the
# emulator conformance tests, the CLI's NCCL perf table and the backend overhead benchmark.
#
#   scripts/gpu-check.sh              # build in ./build-gpu
#   BUILD_DIR=/tmp/b scripts/gpu-check.sh
#
# This builds on the GPU machine (SimGrid, CMake and a compiler needed there). A GPU machine with
# only a CUDA/PyTorch image runs the bundle instead: scripts/gpu-bundle.sh here, then
# gpu-bundle-checks.sh there (docs/nccl-backend.md, "Verified on a GPU").
#
# Exit status: 0 (PASS) only when the GPU checks really ran and everything passed; 77 (SKIPPED)
# when no GPU was usable (no device, no driver, no CUDA libraries) - never PASS for what did not
# run; 1 (FAIL) otherwise, including a driver older than the CUDA runtime. With REQUIRE_GPU=1 a
# skip is a failure. Two ranks on the one GPU run only with NCCL >= 2.30
# (NCCL_MULTI_RANK_GPU_ENABLE=1, NCCL_MAX_CTAS=4, every buffer allocated first); with an older
# NCCL the result says that only one-rank paths ran.
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

step "NCCL backend GPU checks, one rank (gpu_checks)"
gpu_ran=0
"$build/backends/gpu_checks"
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "gpu_checks: SKIPPED (no usable GPU; see the line above)"
  [ "${REQUIRE_GPU:-0}" = "1" ] && status=1
elif [ "$rc" -ne 0 ]; then
  echo "gpu_checks: FAILED (exit $rc)"
  status=1
else
  gpu_ran=1
fi

step "NCCL backend GPU checks, two ranks on one GPU (gpu_checks --multi-rank)"
multi_ran=0
NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_MAX_CTAS=4 "$build/backends/gpu_checks" --multi-rank
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "gpu_checks --multi-rank: SKIPPED (only one-rank paths ran: NCCL < 2.30 or no GPU)"
elif [ "$rc" -ne 0 ]; then
  echo "gpu_checks --multi-rank: FAILED (exit $rc)"
  status=1
else
  multi_ran=1
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

if [ "$status" -ne 0 ]; then
  step "result: FAIL"
  exit 1
fi
if [ "$gpu_ran" -eq 0 ]; then
  step "result: SKIPPED (no GPU check ran; nothing on a GPU passed)"
  exit 77
fi
if [ "$multi_ran" -eq 0 ]; then
  step "result: PASS (one-rank paths only; two ranks on one GPU SKIPPED)"
else
  step "result: PASS (one-rank and two-ranks-on-one-GPU checks)"
fi
exit 0
