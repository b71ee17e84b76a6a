#!/usr/bin/env bash
# Multi-rank checks on ONE GPU and nccl-tests side by side (issue 26), run from the bundle that
# scripts/gpu-bundle.sh makes (with NCCL_SRC_TAR / NCCL_TESTS_SRC_TAR, the sources travel in it:
# the GPU machine reaches no network).
#
#   tar xJf .gpu/twinccl-gpu.tar.xz -C /tmp && /tmp/twinccl-gpu/gpu-multirank.sh   # logs: $OUT
#   RANKS="2 4" SIDE_BY_SIDE=0 /tmp/twinccl-gpu/gpu-multirank.sh                    # a shorter run
#
# What it does, each step under a deadline, its log in $OUT/multirank/<step>.log:
# 1. No GPU: every planned check is reported SKIPPED (exit 77), never PASS.
# 2. NCCL: TWINCCL_NCCL_LIBRARY, else PyTorch's. Older than 2.30 (several ranks per GPU need
#    NCCL_MULTI_RANK_GPU_ENABLE, 2.30+): a FULL NCCL (no ONLY_FUNCS: a reduced build silently
#    returns wrong values for what it lacks) is built from src/nccl.tar.xz for this GPU's
#    architecture only, in $NCCL_BUILD (reused when it holds libnccl.so.2). No sources: SKIPPED.
# 3. For each n in $RANKS (2 4 8): every collective x type x op with #wrong checked (twinccl perf
#    -d all -o all, all_to_all/gather/scatter, sendrecv, hypercube), the gpu_checks program's
#    multi-rank cases (groups, split, _v), and every example; as n threads of one process
#    (TWINCCL_RANKS_PER_GPU=n) and as n processes under torchrun (TWINCCL_ALLOW_SHARED_GPU=1).
#    PASS only when the program exited 0 AND (for perf) printed "Out of bounds values : 0 OK".
# 4. Side by side: nccl-tests 2.19.6 built from src/nccl-tests.tar.xz (all_reduce all_gather
#    reduce_scatter sendrecv; its alltoall needs 2.30's headers) and `twinccl perf --backend nccl`
#    with the same flags at 1 rank (and 8 ranks where mpirun exists: nccl-tests' threads take
#    GPUs gpu0+i, so 8 ranks of one GPU need 8 MPI processes), time per size next to each other.
# Exit: 0 all PASS, 77 when nothing could run (no GPU / no NCCL 2.30), 1 otherwise.
# Budget: a lent GPU machine has 15 minutes in all; a full NCCL build is the long part (not yet
# timed: the issue's reduced build took 72 s on 15 cores). Nothing here has run on a GPU yet.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
logs="${OUT:-/tmp/gpu-logs}/multirank"
mkdir -p "$logs"
bin="$here/bin"
ranks_list="${RANKS:-2 4 8}"
nccl_build="${NCCL_BUILD:-/tmp/nccl-build}"
tests_build="${NCCL_TESTS_BUILD:-/tmp/nccl-tests-build}"
jobs="$(nproc 2>/dev/null || echo 8)"
results=()
any_fail=0
any_ran=0

record() { results+=("$(printf '%-40s %s' "$1" "$2")"); }

finish() {
  printf '\n==== multi-rank results\n'
  printf '%s\n' "${results[@]}" | tee "$logs/results.txt"
  exit "$1"
}

examples=(example_quickstart example_fsdp_step example_dp_tp_2d example_clip_gather_backward)
planned() {
  local n e
  for n in $ranks_list; do
    for mode in threads torchrun; do
      echo "${mode}_${n}_perf_every_type_op"
      [ "$mode" = threads ] && [ "$n" = 2 ] && echo "threads_2_gpu_checks_multi_rank"
      for e in "${examples[@]}"; do echo "${mode}_${n}_${e}"; done
    done
  done
  [ "${SIDE_BY_SIDE:-1}" = 1 ] && echo "side_by_side_1_rank" && echo "side_by_side_8_ranks"
}

skip_all() {
  local name
  echo "SKIPPED: $1"
  while read -r name; do record "$name" "SKIPPED ($1)"; done < <(planned)
  finish 77
}

# step NAME SECONDS GREP COMMAND...: PASS when COMMAND exits 0 and (GREP not empty) its output
# matches GREP; SKIPPED on 77; TIMEOUT on 124/137; FAIL otherwise.
step() {
  local name="$1" secs="$2" want="$3" rc res
  shift 3
  printf '\n==== %s: %s\n' "$name" "$*"
  timeout --kill-after=10 "$secs" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  tail -n 15 "$logs/$name.log"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    res=TIMEOUT
  elif [ "$rc" -eq 77 ]; then
    res="SKIPPED (the program said so)"
  elif [ "$rc" -ne 0 ]; then
    res="FAIL (rc=$rc)"
  elif [ -n "$want" ] && ! grep -q -- "$want" "$logs/$name.log"; then
    res="FAIL (no '$want' in the output)"
  else
    res=PASS
  fi
  case "$res" in PASS) any_ran=1 ;; SKIPPED*) ;; *) any_fail=1 ;; esac
  record "$name" "$res"
}

# ---- the side-by-side worker: gpu-multirank.sh --side-by-side NCCL_TESTS_DIR RANKS (a child of
# step 4, environment inherited): per collective, nccl-tests' and TwinCCL's time per size.
if [ "${1:-}" = --side-by-side ]; then
  tests_dir="$2" n="$3" flags=(-b 8 -e 1G -f 4 -n 20 -w 5 -c 0)
  for c in all_reduce all_gather reduce_scatter sendrecv; do
    nt="$logs/side_by_side_${n}.$c.nccl-tests.log" tw="$logs/side_by_side_${n}.$c.twinccl.log"
    echo "## $c, $n rank(s) of one GPU, flags: ${flags[*]}"
    if [ "$n" = 1 ]; then
      "$tests_dir/${c}_perf" "${flags[@]}" -g 1 >"$nt" 2>&1 || exit 1
      env TWINCCL_RANKS_PER_GPU=1 "$bin/twinccl" perf --backend nccl "$c" "${flags[@]}" -g 1 >"$tw" 2>&1 || exit 1
    else
      mpirun --allow-run-as-root -np "$n" -x NCCL_TESTS_DEVICE=0 -x NCCL_MULTI_RANK_GPU_ENABLE \
        -x NCCL_MAX_CTAS "$tests_dir/${c}_perf" "${flags[@]}" -g 1 >"$nt" 2>&1 || exit 1
      env TWINCCL_ALLOW_SHARED_GPU=1 torchrun --no_python --nproc_per_node="$n" \
        "$bin/twinccl" perf --backend nccl "$c" "${flags[@]}" >"$tw" 2>&1 || exit 1
    fi
    # Data rows start with the size; the time columns are the 6th and 10th in both tables.
    join <(awk '$1 ~ /^[0-9]+$/ {print $1, $6, $10}' "$nt" | sort) \
      <(awk '$1 ~ /^[0-9]+$/ {print $1, $6, $10}' "$tw" | sort) | sort -n |
      awk 'BEGIN {printf "%12s %14s %14s %14s %14s\n", "size(B)", "nccl-tests oop", "twinccl oop",
             "nccl-tests ip", "twinccl ip"}
           {printf "%12s %14s %14s %14s %14s\n", $1, $2, $4, $3, $5}'
    "$bin/twinccl" compare "$nt" 2>&1 | tail -n 20 || true
  done
  exit 0
fi

# ---- 1. a GPU?
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then skip_all "no GPU: nvidia-smi lists none"; fi
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')"
gencode="-gencode=arch=compute_${cc},code=sm_${cc}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"

# ---- 2. NCCL >= 2.30
nccl_version() {  # ncclGetVersion of the library $1 (0 when it cannot be loaded)
  python3 -c 'import ctypes, sys
try:
    lib = ctypes.CDLL(sys.argv[1]); v = ctypes.c_int(0); lib.ncclGetVersion(ctypes.byref(v)); print(v.value)
except OSError:
    print(0)' "$1"
}
if [ -z "${TWINCCL_NCCL_LIBRARY:-}" ]; then
  TWINCCL_NCCL_LIBRARY="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)"
fi
version="$(nccl_version "${TWINCCL_NCCL_LIBRARY:-libnccl.so.2}")"
echo "NCCL ${TWINCCL_NCCL_LIBRARY:-libnccl.so.2}: $version"
if [ "${version:-0}" -lt 23000 ]; then
  if [ ! -e "$nccl_build/lib/libnccl.so.2" ]; then
    [ -f "$here/src/nccl.tar.xz" ] || skip_all "NCCL $version < 2.30 and no src/nccl.tar.xz in the bundle"
    rm -rf /tmp/nccl-src && mkdir -p /tmp/nccl-src && tar xJf "$here/src/nccl.tar.xz" -C /tmp/nccl-src
    step build_nccl_full 900 "" make -C /tmp/nccl-src/nccl -j "$jobs" src.build \
      BUILDDIR="$nccl_build" CUDA_HOME="$cuda_home" NVCC_GENCODE="$gencode"
  fi
  [ -e "$nccl_build/lib/libnccl.so.2" ] || skip_all "the NCCL build failed (see build_nccl_full.log)"
  TWINCCL_NCCL_LIBRARY="$nccl_build/lib/libnccl.so.2"
  version="$(nccl_version "$TWINCCL_NCCL_LIBRARY")"
  [ "${version:-0}" -ge 23000 ] || skip_all "the NCCL built reports $version, not >= 2.30"
fi
if [ -z "${TWINCCL_CUDART_LIBRARY:-}" ]; then
  for c in "$cuda_home"/lib64/libcudart.so.13 "$cuda_home"/lib64/libcudart.so.12; do
    [ -e "$c" ] && { TWINCCL_CUDART_LIBRARY="$c"; break; }
  done
fi
export TWINCCL_NCCL_LIBRARY TWINCCL_CUDART_LIBRARY TWINCCL_BACKEND=nccl
export NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_MAX_CTAS="${NCCL_MAX_CTAS:-4}"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---- 3. every check at 2, 4, 8 ranks of this one GPU, threads and processes
perf_all=(perf --backend nccl -b 1K -e 1M -f 32 -d all -o all all_reduce reduce_scatter all_gather
  broadcast reduce alltoall gather scatter sendrecv hypercube)
have_torchrun=0
command -v torchrun >/dev/null && have_torchrun=1
for n in $ranks_list; do
  step "threads_${n}_perf_every_type_op" 300 "Out of bounds values : 0 OK" \
    env TWINCCL_RANKS_PER_GPU="$n" "$bin/twinccl" "${perf_all[@]}"
  [ "$n" = 2 ] && step threads_2_gpu_checks_multi_rank 180 "" "$bin/gpu_checks" --multi-rank -r compact
  for e in "${examples[@]}"; do
    step "threads_${n}_${e}" 120 "" env TWINCCL_RANKS_PER_GPU="$n" "$bin/$e"
  done
  if [ "$have_torchrun" = 0 ]; then
    record "torchrun_${n}_*" "SKIPPED (no torchrun here)"
    continue
  fi
  step "torchrun_${n}_perf_every_type_op" 300 "Out of bounds values : 0 OK" \
    env TWINCCL_ALLOW_SHARED_GPU=1 torchrun --no_python --nproc_per_node="$n" \
    "$bin/twinccl" "${perf_all[@]}"
  for e in "${examples[@]}"; do
    step "torchrun_${n}_${e}" 120 "" env TWINCCL_ALLOW_SHARED_GPU=1 \
      torchrun --no_python --nproc_per_node="$n" "$bin/$e"
  done
done

# ---- 4. nccl-tests side by side (time per size, out of place and in place)
if [ "${SIDE_BY_SIDE:-1}" = 1 ]; then
  if [ ! -x "$tests_build/all_reduce_perf" ] && [ -f "$here/src/nccl-tests.tar.xz" ]; then
    rm -rf /tmp/nccl-tests-src && mkdir -p /tmp/nccl-tests-src
    tar xJf "$here/src/nccl-tests.tar.xz" -C /tmp/nccl-tests-src
    # NCCL_HOME needs include/nccl.h and lib/libnccl.so: the NCCL in use, its headers beside it.
    nccl_lib_dir="$(dirname "$TWINCCL_NCCL_LIBRARY")"
    [ -e "$nccl_lib_dir/libnccl.so" ] || ln -s libnccl.so.2 "$nccl_lib_dir/libnccl.so"
    step build_nccl_tests 300 "" make -C /tmp/nccl-tests-src/nccl-tests -j "$jobs" MPI=0 \
      NCCL_HOME="$(dirname "$nccl_lib_dir")" CUDA_HOME="$cuda_home" NVCC_GENCODE="$gencode" \
      BUILDDIR="$tests_build" BIN_FILES_LIST="all_reduce all_gather reduce_scatter sendrecv"
  fi
  if [ -x "$tests_build/all_reduce_perf" ]; then
    step side_by_side_1_rank 600 "" bash "$here/gpu-multirank.sh" --side-by-side "$tests_build" 1
  else
    record side_by_side_1_rank "SKIPPED (no nccl-tests: src/nccl-tests.tar.xz missing or its build failed)"
  fi
  # 8 ranks of one GPU: nccl-tests' threads take GPUs gpu0+i, so it needs 8 MPI processes and a
  # build with MPI=1 (MPI headers), given as NCCL_TESTS_MPI_BUILD; never 8 separate 1-rank runs.
  if [ -x "${NCCL_TESTS_MPI_BUILD:-/nonexistent}/all_reduce_perf" ] && command -v mpirun >/dev/null &&
    [ "$have_torchrun" = 1 ]; then
    step side_by_side_8_ranks 600 "" bash "$here/gpu-multirank.sh" --side-by-side \
      "$NCCL_TESTS_MPI_BUILD" 8
  else
    record side_by_side_8_ranks "SKIPPED (needs mpirun, torchrun and nccl-tests built with MPI=1 in NCCL_TESTS_MPI_BUILD)"
  fi
fi

[ "$any_fail" = 1 ] && finish 1
[ "$any_ran" = 1 ] && finish 0
finish 77
