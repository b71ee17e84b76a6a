#!/usr/bin/env bash
# The GPU checks, run from a bundle made by scripts/gpu-bundle.sh on a machine with a GPU, CUDA
# and NCCL (here: PyTorch's NCCL, torchrun) but no TwinCCL build. Every step has a deadline; each
# step's output goes to $LOGS/<step>.log and a table of results is printed last.
#
#   tar xJf .gpu/twinccl-gpu.tar.xz -C /tmp && /tmp/twinccl-gpu/gpu-bundle-checks.sh
#   TWINCCL_NCCL_LIBRARY=/path/libnccl.so.2 /tmp/twinccl-gpu/gpu-bundle-checks.sh   # logs: ${OUT:-/tmp/gpu-logs}
#
# A step's result is what its program said: PASS (exit 0), SKIP (77), EXPECTED-ERROR (a misuse that
# must end with a clear message, checked by grep), FAIL otherwise, TIMEOUT (124: a hang).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
logs="${OUT:-/tmp/gpu-logs}"
mkdir -p "$logs"
bin="$here/bin"
results=()

# Our programs get the bundle's libraries; Python (torchrun) keeps its own.
run="$here/with-libs"
cat >"$run" <<EOF
#!/usr/bin/env bash
export LD_LIBRARY_PATH="$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
exec "\$@"
EOF
chmod +x "$run"

# NCCL and the CUDA runtime: the ones given, else PyTorch's (pip nvidia-nccl, nvidia-cuda-runtime).
if [ -z "${TWINCCL_NCCL_LIBRARY:-}" ]; then
  TWINCCL_NCCL_LIBRARY="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)"
fi
if [ -z "${TWINCCL_CUDART_LIBRARY:-}" ]; then
  for c in /usr/local/cuda/lib64/libcudart.so.13 /usr/local/cuda/lib64/libcudart.so.12; do
    [ -e "$c" ] && { TWINCCL_CUDART_LIBRARY="$c"; break; }
  done
fi
export TWINCCL_NCCL_LIBRARY TWINCCL_CUDART_LIBRARY
echo "bundle commit: $(cat "$here/commit")"
echo "TWINCCL_NCCL_LIBRARY=$TWINCCL_NCCL_LIBRARY"
echo "TWINCCL_CUDART_LIBRARY=${TWINCCL_CUDART_LIBRARY:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())' 2>&1

# step NAME SECONDS EXPECT COMMAND...   EXPECT: pass, or a grep -E pattern the error must show
step() {
  local name="$1" secs="$2" expect="$3"
  shift 3
  printf '\n==== %s: %s\n' "$name" "$*"
  local t0 rc res
  t0=$(date +%s%N)
  timeout --kill-after=5 "$secs" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  local dt="$((ms / 1000)).$(((ms % 1000) / 100))"
  tail -n 40 "$logs/$name.log"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    res=TIMEOUT
  elif [ "$expect" = pass ]; then
    case "$rc" in 0) res=PASS ;; 77) res=SKIP ;; *) res="FAIL(rc=$rc)" ;; esac
  elif [ "$rc" -ne 0 ] && grep -E -q "$expect" "$logs/$name.log"; then
    res="EXPECTED-ERROR(rc=$rc)"
  else
    res="FAIL(rc=$rc, wanted /$expect/)"
  fi
  results+=("$(printf '%-28s %-34s %6ss' "$name" "$res" "$dt")")
}

step gpu_checks 180 pass "$run" "$bin/gpu_checks" -r compact
step gpu_checks_multi_rank 120 pass env NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_MAX_CTAS=4 \
  "$run" "$bin/gpu_checks" --multi-rank -r compact
step perf_nccl 120 pass env TWINCCL_BACKEND=nccl "$run" "$bin/twinccl" perf --backend nccl \
  -b 1K -e 256M -f 4
step perf_nccl_every_dtype_op 300 pass env TWINCCL_BACKEND=nccl "$run" "$bin/twinccl" perf \
  --backend nccl -b 1K -e 1M -f 32 -d all -o all all_reduce reduce_scatter all_gather broadcast \
  reduce alltoall gather scatter sendrecv hypercube
step perf_nccl_too_big 60 "out of memory|cudaMalloc" env TWINCCL_BACKEND=nccl "$run" "$bin/twinccl" perf \
  --backend nccl -b 4T -e 4T
step bench_nccl_overhead 120 pass "$run" "$bin/bench_nccl_overhead"
step quickstart_plain 60 pass env TWINCCL_BACKEND=nccl "$run" "$bin/example_quickstart"
if command -v torchrun >/dev/null; then
  # What torchrun hands its workers: whether they find the agent's store (TORCHELASTIC_USE_AGENT_STORE).
  step torchrun_environment 60 pass torchrun --no_python --nproc_per_node=1 bash -c \
    'env | grep -E "^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|TORCHELASTIC_[A-Z_]*)=" | sort'

  step torchrun_agent_store 90 pass env TWINCCL_BACKEND=nccl torchrun --no_python --nproc_per_node=1 \
    "$run" "$bin/example_quickstart"
  step torchrun_own_store 90 pass env TWINCCL_BACKEND=nccl TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 \
    torchrun --no_python --nproc_per_node=1 "$run" "$bin/example_quickstart"
  step torchrun_fsdp 90 pass env TWINCCL_BACKEND=nccl torchrun --no_python --nproc_per_node=1 \
    "$run" "$bin/example_fsdp_step"
  step torchrun_dp_tp 90 pass env TWINCCL_BACKEND=nccl torchrun --no_python --nproc_per_node=1 \
    "$run" "$bin/example_dp_tp_2d"
  step torchrun_clip 90 pass env TWINCCL_BACKEND=nccl torchrun --no_python --nproc_per_node=1 \
    "$run" "$bin/example_clip_gather_backward"
  # Two processes, one GPU: NCCL < 2.30 refuses duplicate GPUs; the user must read why, no hang.
  step torchrun_two_ranks_one_gpu 120 "GPU|gpu|device" env TWINCCL_BACKEND=nccl \
    torchrun --no_python --nproc_per_node=2 "$run" "$bin/example_quickstart"
fi
if command -v mpirun >/dev/null; then
  step mpirun_one 90 pass env TWINCCL_BACKEND=nccl mpirun --allow-run-as-root -np 1 \
    "$run" "$bin/example_quickstart"
else
  results+=("$(printf '%-28s %-34s' mpirun_one 'SKIP (no mpirun here)')")
fi

printf '\n==== results (bundle %s)\n' "$(cat "$here/commit")"
printf '%s\n' "${results[@]}" | tee "$logs/results.txt"
grep -h "Out of bounds values" "$logs"/perf_nccl*.log | sort | uniq -c
