#!/usr/bin/env bash
# Runs the benchmarks (long measurements; not part of the test suite) and prints their tables,
# then a side-by-side table: the emulator next to Open MPI (8 ranks, shared memory) on the same
# collectives and sizes, in the same run, when Open MPI is installed (Debian: openmpi-bin and
# libopenmpi-dev; never required: without them the peer column is skipped, visibly).
#
#   scripts/bench.sh            build (scripts/build.sh), run every bench, then the peer table
#   scripts/bench.sh peer       the peer table only
#   TWINCCL_BENCH_BUILD_DIR=build-x scripts/bench.sh peer   use that built folder, build nothing
#
# The peer programs: bench/bench_peer_twinccl.cc (a CMake target) and bench/peer_mpi.c (compiled
# here with mpicc). Both print "name value" lines with the same names, measured the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TWINCCL_BENCH_BUILD_DIR:-build}
[ -n "${TWINCCL_BENCH_BUILD_DIR:-}" ] || scripts/build.sh
what=${1:-all}

if [ "$what" = all ]; then
  for b in "$build"/bench/bench_*; do
    [ -x "$b" ] || continue
    case "$(basename "$b")" in bench_peer_*) continue ;; esac
    echo "== $b"
    "$b" || echo "($b exited with $?)"
  done
fi

echo "== TwinCCL next to Open MPI: 8 ranks, float32 sum, one run"
echo "# $(uptime | sed 's/.*load average/load average/') on $(nproc) cores"
twinccl=$("$build/bench/bench_peer_twinccl")
mpi=""
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  mpicc -O2 -o "$build/bench/peer_mpi" bench/peer_mpi.c
  as_root=()
  [ "$(id -u)" != 0 ] || as_root=(--allow-run-as-root)
  # vader is Open MPI 4's shared-memory transport; no single-copy (CMA), which containers forbid.
  mpi=$(mpirun -np 8 --oversubscribe "${as_root[@]}" --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none "$build/bench/peer_mpi")
  echo "# Open MPI: $(mpirun --version | head -1)"
else
  echo "Open MPI not installed: peer column skipped (apt-get install openmpi-bin libopenmpi-dev)"
fi
awk -v twinccl="$twinccl" -v mpi="$mpi" 'BEGIN {
  n = split(twinccl, t, "\n"); split(mpi, m, "\n")
  for (i in m) { split(m[i], f, " "); peer[f[1]] = f[2] }
  label["all_reduce_8B_us"] = "all_reduce 8 B, back-to-back (us/call)"
  label["all_reduce_64MiB_ms"] = "all_reduce 64 MiB fp32 (ms)"
  label["reduce_scatter_64MiB_ms"] = "reduce_scatter 64 MiB input (ms)"
  printf "| %-40s | %10s | %10s | %-18s |\n", "measure", "TwinCCL", "Open MPI", "Open MPI / TwinCCL"
  printf "|%s|%s|%s|%s|\n", "------------------------------------------", "------------", "------------", "--------------------"
  for (i = 1; i <= n; ++i) {
    split(t[i], f, " ")
    if (f[1] in peer) {
      printf "| %-40s | %10s | %10s | %-18s |\n", label[f[1]], f[2], peer[f[1]], sprintf("%.2fx", peer[f[1]] / f[2])
    } else {
      printf "| %-40s | %10s | %10s | %-18s |\n", label[f[1]], f[2], "-", "-"
    }
  }
}'
