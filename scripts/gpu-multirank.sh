#!/usr/bin/env bash
# Multi-rank checks on ONE GPU and nccl-tests side by side (issue 26), run from the bundle that
# scripts/gpu-bundle.sh makes (with NCCL_SRC_TAR / NCCL_TESTS_SRC_TAR, the sources travel in it:
# the GPU machine reaches no network).
#
#   tar xJf .gpu/twinccl-gpu.tar.xz -C /tmp && /tmp/twinccl-gpu/gpu-multirank.sh   # logs: $OUT
#   RANKS="2 4" MODES="threads slurm" SIDE_BY_SIDE=0 /tmp/twinccl-gpu/gpu-multirank.sh  # shorter
#   BUILD_ONLY=1 /tmp/twinccl-gpu/gpu-multirank.sh   # only build NCCL + nccl-tests (a call of its own)
#   DOUBLE=build/backends/libtwinccl_nccl_double.so BIN=build scripts/gpu-multirank.sh  # dry run
#
# What it does, each step under a deadline, its log in $OUT/multirank/<step>.log:
# 1. No GPU: every planned check is reported SKIPPED (exit 77), never PASS.
# 2. NCCL: TWINCCL_NCCL_LIBRARY, else PyTorch's. Older than 2.30 (several ranks per GPU need
#    NCCL_MULTI_RANK_GPU_ENABLE, 2.30+): a FULL NCCL (no ONLY_FUNCS: a reduced build silently
#    returns wrong values for what it lacks) is built from src/nccl.tar.xz for this GPU's
#    architecture only, in $NCCL_BUILD (reused when it holds libnccl.so.2). No sources: SKIPPED.
# 3. For each n in $RANKS (2 4 8) and each launch mode in $MODES: every collective x type x op
#    with #wrong checked (twinccl perf -d all -o all, all_to_all/gather/scatter, sendrecv,
#    hypercube), the gpu_checks program's multi-rank cases (groups, split, _v; threads, 2 ranks),
#    and every example. Modes: threads (n threads of one process, TWINCCL_RANKS_PER_GPU=n),
#    torchrun (n processes), mpirun (n processes under Open MPI's mpirun, where installed) and
#    slurm (n processes, each given the SLURM_* variables srun gives a task of a one-node step:
#    no Slurm needed). Processes share the GPU with TWINCCL_ALLOW_SHARED_GPU=1.
#    PASS only when every process exited 0 AND (for perf) rank 0 printed "Out of bounds values : 0 OK".
# 4. Side by side: nccl-tests 2.19.6 built from src/nccl-tests.tar.xz (all_reduce all_gather
#    reduce_scatter sendrecv; its alltoall needs 2.30's headers) and `twinccl perf --backend nccl`
#    with the same flags at 1 rank (and 8 ranks where mpirun exists: nccl-tests' threads take
#    GPUs gpu0+i, so 8 ranks of one GPU need 8 MPI processes), time per size next to each other.
# Last, one table: launch mode x ranks, PASS/FAIL/SKIPPED per cell (details above it).
# Exit: 0 all PASS, 77 when nothing could run (no GPU / no NCCL 2.30), 1 otherwise.
#
# Dry run without a GPU (DOUBLE=the recording double of tests/backends/nccl_double, BIN=a build
# folder): the same steps on the double, which moves data on host threads. Threads: the real
# checks on the double. Processes (torchrun, mpirun, slurm): the double cannot join ranks of
# different processes, so each process's ncclCommInitRankConfig is logged and refused
# (TWINCCL_DOUBLE_INIT_ALONE=1); a cell is DRY-PASS when every rank 0..n-1 asked for rank r of n
# with one unique id (made by one process, fetched by the others from its store). No NCCL build,
# no gpu_checks, no nccl-tests. Budget on a GPU: a lent machine has 15 minutes in all; the full
# NCCL build is the long part (the issue's reduced build took 72 s on 15 cores).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
logs="${OUT:-/tmp/gpu-logs}/multirank"
mkdir -p "$logs"
bin="$here/bin"
ranks_list="${RANKS:-2 4 8}"
modes="${MODES:-threads torchrun mpirun slurm}"
nccl_build="${NCCL_BUILD:-/tmp/nccl-build}"
tests_build="${NCCL_TESTS_BUILD:-/tmp/nccl-tests-build}"
jobs="$(nproc 2>/dev/null || echo 8)"
double="${DOUBLE:-}"
results=()
declare -A cell=()
any_fail=0
any_ran=0

# record NAME RESULT [CELL]: one line of details; CELL ("threads 4") also gets the result.
record() {
  results+=("$(printf '%-44s %s' "$1" "$2")")
  [ -n "${3:-}" ] || return 0
  local old="${cell[$3]:-}" new
  case "$2" in
    PASS) new=PASS ;;
    DRY-PASS*) new=DRY-PASS ;;
    SKIPPED*) new=SKIPPED ;;
    *) new=FAIL ;;
  esac
  # FAIL wins over everything, then PASS/DRY-PASS over SKIPPED.
  if [ -z "$old" ] || [ "$new" = FAIL ] || { [ "$old" = SKIPPED ] && [ "$new" != SKIPPED ]; }; then
    cell[$3]="$new"
  fi
}

finish() {
  printf '\n==== multi-rank checks, each line one program (logs in %s)\n' "$logs"
  printf '%s\n' "${results[@]}" | tee "$logs/results.txt"
  {
    printf '\n==== multi-rank checks on one GPU%s: PASS = every check of that cell passed\n' \
      "${double:+ (DRY RUN on the recording double: no GPU)}"
    printf '%-10s' "ranks"
    for mode in threads torchrun mpirun slurm; do printf ' %-10s' "$mode"; done
    printf '\n'
    for n in $ranks_list; do
      printf '%-10s' "$n"
      for mode in threads torchrun mpirun slurm; do printf ' %-10s' "${cell[$mode $n]:-not-run}"; done
      printf '\n'
    done
    [ -f "$logs/side_by_side.txt" ] && cat "$logs/side_by_side.txt"
  } | tee "$logs/table.txt"
  exit "$1"
}

examples=(example_quickstart example_fsdp_step example_dp_tp_2d example_clip_gather_backward)
planned() {
  local n e mode
  for n in $ranks_list; do
    for mode in $modes; do
      echo "${mode}_${n}_perf_every_type_op|$mode $n"
      [ "$mode" = threads ] && [ "$n" = 2 ] && echo "threads_2_gpu_checks_multi_rank|$mode $n"
      for e in "${examples[@]}"; do echo "${mode}_${n}_${e}|$mode $n"; done
    done
  done
  echo "bench_nccl_overhead_1_rank|" && echo "bench_nccl_overhead_8_rank|"
  [ "${SIDE_BY_SIDE:-1}" = 1 ] && echo "side_by_side_1_rank|" && echo "side_by_side_8_ranks|"
}

skip_all() {
  local line
  echo "SKIPPED: $1"
  while read -r line; do record "${line%%|*}" "SKIPPED ($1)" "${line#*|}"; done < <(planned)
  finish 77
}

# step NAME CELL SECONDS GREP COMMAND...: PASS when COMMAND exits 0 and (GREP not empty) its output
# matches GREP; SKIPPED on 77; TIMEOUT on 124/137; FAIL otherwise. Dry run, processes: see
# dry_mapping below.
step() {
  local name="$1" where="$2" secs="$3" want="$4" rc res
  shift 4
  printf '\n==== %s: %s\n' "$name" "$*"
  rm -f "$logs/$name.double.log"
  local dry=()  # dry run, processes: the double's log of every process, for dry_mapping
  [ -n "$double" ] && [ -n "$where" ] && [ "${where%% *}" != threads ] &&
    dry=(env TWINCCL_DOUBLE_INIT_ALONE=1 TWINCCL_DOUBLE_INIT_ALONE_WAIT_MS=20000
      TWINCCL_DOUBLE_LOG_FILE="$logs/$name.double.log")
  timeout --kill-after=10 "$secs" "${dry[@]}" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  tail -n 15 "$logs/$name.log"
  if [ -n "$double" ] && [ -n "$where" ] && [ "${where%% *}" != threads ]; then
    res="$(dry_mapping "${where#* }" "$logs/$name.double.log")"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    res=TIMEOUT
  elif [ "$rc" -eq 77 ]; then
    res="SKIPPED (the program said so)"
  elif [ "$rc" -ne 0 ]; then
    res="FAIL (rc=$rc)"
  elif [ -n "$want" ] && ! grep -q -- "$want" "$logs/$name.log"; then
    res="FAIL (no '$want' in the output)"
  elif [ -n "$want" ] && [ "$(grep -c -- "${want%%:*}" "$logs/$name.log")" != \
    "$(grep -c -- "$want" "$logs/$name.log")" ]; then
    res="FAIL (a '${want%%:*}' line is not '$want')"  # one table per collective: all must say it
  else
    res=PASS
  fi
  case "$res" in PASS | DRY-PASS*) any_ran=1 ;; SKIPPED*) ;; *) any_fail=1 ;; esac
  record "$name" "$res" "$where"
}

# Dry run, n processes on the double: DRY-PASS when ranks 0..n-1 each asked NCCL for rank r of n
# with one and the same unique id (the first communicator of the run, the world).
dry_mapping() {
  local n="$1" log="$2" r ids
  for ((r = 0; r < n; r++)); do
    grep -q "ncclCommInitRankConfig rank=$r nranks=$n " "$log" 2>/dev/null ||
      { echo "FAIL (dry run: no init of rank $r of $n in the double's log)"; return; }
  done
  ids="$(grep -o "nranks=$n device=[0-9]* id=[0-9.]*" "$log" | sed 's/.* id=//' | sort -u | wc -l)"
  [ "$ids" = 1 ] || { echo "FAIL (dry run: $ids different unique ids)"; return; }
  echo "DRY-PASS (rank r of $n, one id, in each process)"
}

# ---- launchers: run COMMAND... as n ranks in MODE
# slurm: the variables srun gives each task of a one-node step with n tasks (srun(1), "OUTPUT
# ENVIRONMENT VARIABLES"), set per process here; the job id is random (the store port derives
# from it). Waits for every process; exits with the first failure's status.
if [ "${1:-}" = --slurm-like ]; then
  n="$2"
  shift 2
  job=$((100000 + (RANDOM * 32768 + RANDOM) % 900000))
  pids=()
  trap 'kill "${pids[@]}" 2>/dev/null; exit 143' TERM INT
  for ((r = 0; r < n; r++)); do
    env SLURM_PROCID="$r" SLURM_NTASKS="$n" SLURM_LOCALID="$r" SLURM_NODEID=0 \
      SLURM_NTASKS_PER_NODE="$n" SLURM_TASKS_PER_NODE="$n" SLURM_STEP_NUM_TASKS="$n" \
      SLURM_JOB_ID="$job" SLURM_STEP_ID=0 SLURM_NODELIST=localhost SLURM_STEP_NODELIST=localhost \
      SLURM_JOB_NODELIST=localhost SLURM_JOB_NUM_NODES=1 SLURM_STEP_NUM_NODES=1 \
      SLURM_NNODES=1 TWINCCL_ALLOW_SHARED_GPU=1 "$@" >"$logs/.slurm-$job-$r.out" 2>&1 &
    pids+=($!)
  done
  status=0
  for ((r = 0; r < n; r++)); do
    wait "${pids[$r]}"
    rc=$?
    [ "$status" = 0 ] && status=$rc
    if [ "$r" = 0 ] || [ "$rc" != 0 ]; then
      [ "$r" = 0 ] || echo "---- task $r (exit $rc):"
      cat "$logs/.slurm-$job-$r.out"
    fi
    rm -f "$logs/.slurm-$job-$r.out"
  done
  exit "$status"
fi

# launch MODE N: the command prefix that starts N ranks in MODE.
launch() {
  case "$1" in
    threads) echo "env TWINCCL_RANKS_PER_GPU=$2" ;;
    torchrun) echo "env TWINCCL_ALLOW_SHARED_GPU=1 torchrun --no_python --nproc_per_node=$2" ;;
    mpirun)
      local x=""
      for v in $(env | grep -o -E '^(TWINCCL|NCCL)_[A-Z0-9_]*' | sort -u) LD_LIBRARY_PATH; do
        x+=" -x $v"
      done
      echo "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root --oversubscribe -np $2 -x TWINCCL_ALLOW_SHARED_GPU=1$x"
      ;;
    slurm) echo "bash $here/gpu-multirank.sh --slurm-like $2" ;;
  esac
}

# Why MODE cannot run here (empty: it can).
unavailable() {
  case "$1" in
    torchrun) command -v torchrun >/dev/null || echo "no torchrun here" ;;
    mpirun)
      if ! command -v mpirun >/dev/null; then
        echo "no mpirun here"
      elif ! mpirun --version 2>&1 | grep -q -E 'Open MPI|OpenRTE'; then
        echo "mpirun is not Open MPI's: TwinCCL reads OMPI_COMM_WORLD_* only"
      fi
      ;;
  esac
}

# ---- the side-by-side worker: gpu-multirank.sh --side-by-side NCCL_TESTS_DIR RANKS (a child of
# step 4, environment inherited): per collective, nccl-tests' and TwinCCL's time per size.
if [ "${1:-}" = --side-by-side ]; then
  read -r -a extra <<<"${SIDE_FLAGS:-}"  # e.g. SIDE_FLAGS="-G 10": both sides get it
  tests_dir="$2" n="$3" flags=(-b 8 -e 1G -f 4 -n 20 -w 5 -c 0 "${extra[@]}")
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
      awk 'BEGIN {printf "%12s %14s %14s %9s %14s %14s %9s\n", "size(B)", "nccl-tests oop",
             "twinccl oop", "diff", "nccl-tests ip", "twinccl ip", "diff"}
           function d(a, b) { return a > 0 ? sprintf("%+.1f%%", 100 * (b - a) / a) : "-" }
           {printf "%12s %14s %14s %9s %14s %14s %9s\n", $1, $2, $4, d($2, $4), $3, $5, d($3, $5)}'
    "$bin/twinccl" compare "$nt" 2>&1 | tail -n 20 || true
  done
  exit 0
fi

# ---- 1. a GPU? (dry run: the recording double instead, and the programs of a build folder)
if [ -n "$double" ]; then
  [ -f "$double" ] || { echo "DOUBLE=$double: no such file" >&2; exit 2; }
  build="${BIN:-$here/../build}"
  bin="$logs/bin"
  mkdir -p "$bin"
  for p in cli/twinccl backends/gpu_checks "${examples[@]/#/examples/}"; do
    [ -x "$build/$p" ] && ln -sf "$(cd "$build" && pwd)/$p" "$bin/$(basename "$p")"
  done
  export TWINCCL_NCCL_LIBRARY="$double" TWINCCL_CUDART_LIBRARY="$double" TWINCCL_BACKEND=nccl
  export TWINCCL_DOUBLE_NCCL_VERSION=23007 TWINCCL_DOUBLE_DEVICE_COUNT=1
  export NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_MAX_CTAS=4
  SIDE_BY_SIDE=0
else
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
      step build_nccl_full "" 900 "" make -C /tmp/nccl-src/nccl -j "$jobs" src.build \
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
fi

# nccl-tests 2.19.6 from the bundle's sources, against the NCCL in use (once: reused when built).
build_nccl_tests() {
  if [ ! -x "$tests_build/all_reduce_perf" ] && [ -f "$here/src/nccl-tests.tar.xz" ]; then
    rm -rf /tmp/nccl-tests-src && mkdir -p /tmp/nccl-tests-src
    tar xJf "$here/src/nccl-tests.tar.xz" -C /tmp/nccl-tests-src
    # NCCL_HOME needs include/nccl.h and lib/libnccl.so: the NCCL in use, its headers beside it.
    nccl_lib_dir="$(dirname "$TWINCCL_NCCL_LIBRARY")"
    [ -e "$nccl_lib_dir/libnccl.so" ] || ln -s libnccl.so.2 "$nccl_lib_dir/libnccl.so"
    step build_nccl_tests "" 300 "" make -C /tmp/nccl-tests-src/nccl-tests -j "$jobs" MPI=0 \
      NCCL_HOME="$(dirname "$nccl_lib_dir")" CUDA_HOME="$cuda_home" NVCC_GENCODE="$gencode" \
      BUILDDIR="$tests_build" BIN_FILES_LIST="all_reduce all_gather reduce_scatter sendrecv"
  fi
}

# BUILD_ONLY=1: NCCL and nccl-tests built (one device call of its own), no checks; a later call
# with the same NCCL_BUILD / NCCL_TESTS_BUILD reuses them.
if [ "${BUILD_ONLY:-0}" = 1 ]; then
  [ -n "$double" ] || build_nccl_tests
  printf '\nBUILD_ONLY: NCCL %s at %s; nccl-tests: %s\n' "${version:-?}" "$TWINCCL_NCCL_LIBRARY" \
    "$([ -x "$tests_build/all_reduce_perf" ] && echo "$tests_build" || echo none)"
  printf '%s\n' "${results[@]}"
  [ "$any_fail" = 1 ] && exit 1
  exit 0
fi

# ---- 3. every check at 2, 4, 8 ranks of this one GPU, in each launch mode
read -r -a perf_sizes <<<"${PERF_SIZES:--b 1K -e 1M -f 32}"
perf_all=(perf --backend nccl "${perf_sizes[@]}" -d all -o all all_reduce reduce_scatter all_gather
  broadcast reduce alltoall gather scatter sendrecv hypercube)
for n in $ranks_list; do
  for mode in $modes; do
    why="$(unavailable "$mode")"
    if [ -n "$why" ]; then
      record "${mode}_${n}_*" "SKIPPED ($why)" "$mode $n"
      continue
    fi
    read -r -a start <<<"$(launch "$mode" "$n")"
    step "${mode}_${n}_perf_every_type_op" "$mode $n" 300 "Out of bounds values : 0 OK" \
      "${start[@]}" "$bin/twinccl" "${perf_all[@]}"
    if [ "$mode" = threads ] && [ "$n" = 2 ]; then
      if [ -n "$double" ]; then
        record threads_2_gpu_checks_multi_rank "SKIPPED (dry run: gpu_checks needs a GPU)" "$mode $n"
      else
        step threads_2_gpu_checks_multi_rank "$mode $n" 180 "" "$bin/gpu_checks" --multi-rank -r compact
      fi
    fi
    for e in "${examples[@]}"; do
      step "${mode}_${n}_${e}" "$mode $n" 120 "" "${start[@]}" "$bin/$e"
    done
  done
done

# Host overhead per call (bench_nccl_overhead): 1 rank, and 8 ranks of this GPU, where it also
# times the same call on a blocking communicator (nccl-tests' kind; TwinCCL's are non-blocking).
for n in 1 8; do
  if [ -n "$double" ]; then
    record "bench_nccl_overhead_${n}_rank" "SKIPPED (dry run: timings of the double mean nothing)"
  else
    step "bench_nccl_overhead_${n}_rank" "" 180 "host per call" "$bin/bench_nccl_overhead" \
      --host-only --ranks "$n"
  fi
done

# ---- 4. nccl-tests side by side (time per size, out of place and in place)
if [ "${SIDE_BY_SIDE:-1}" = 1 ]; then
  build_nccl_tests
  if [ -x "$tests_build/all_reduce_perf" ]; then
    step side_by_side_1_rank "" 600 "" bash "$here/gpu-multirank.sh" --side-by-side "$tests_build" 1
  else
    record side_by_side_1_rank "SKIPPED (no nccl-tests: src/nccl-tests.tar.xz missing or its build failed)"
  fi
  # 8 ranks of one GPU: nccl-tests' threads take GPUs gpu0+i, so it needs 8 MPI processes and a
  # build with MPI=1 (MPI headers), given as NCCL_TESTS_MPI_BUILD; never 8 separate 1-rank runs.
  if [ -x "${NCCL_TESTS_MPI_BUILD:-/nonexistent}/all_reduce_perf" ] && command -v mpirun >/dev/null &&
    command -v torchrun >/dev/null; then
    step side_by_side_8_ranks "" 600 "" bash "$here/gpu-multirank.sh" --side-by-side \
      "$NCCL_TESTS_MPI_BUILD" 8
  else
    record side_by_side_8_ranks "SKIPPED (needs mpirun, torchrun and nccl-tests built with MPI=1 in NCCL_TESTS_MPI_BUILD)"
  fi
  # The tables of every side-by-side run, for the final report.
  for f in "$logs"/side_by_side_1_rank.log "$logs"/side_by_side_8_ranks.log; do
    [ -f "$f" ] && { printf '\n==== nccl-tests side by side: %s\n' "$(basename "$f" .log)"; grep -v '^====' "$f"; }
  done >"$logs/side_by_side.txt"
fi

[ "$any_fail" = 1 ] && finish 1
[ "$any_ran" = 1 ] && finish 0
finish 77
