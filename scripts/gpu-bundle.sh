#!/usr/bin/env bash
# Packs what the GPU checks run into one folder that travels to a GPU machine without a build
# there (no SimGrid, no compiler needed): the programs of a Release build with NCCL, the shared
# libraries they need beyond glibc and libstdc++, and scripts/gpu-bundle-checks.sh.
#
#   scripts/gpu-bundle.sh                    # build/ -> .gpu/twinccl-gpu.tar.xz (~20 MB)
#   scripts/gpu-bundle.sh BUILD_DIR OUT_DIR
# On the GPU machine: tar xJf twinccl-gpu.tar.xz -C /tmp && /tmp/twinccl-gpu/gpu-bundle-checks.sh
#
# CUDA and NCCL are not packed: the NCCL backend loads them at run time (TWINCCL_CUDART_LIBRARY,
# TWINCCL_NCCL_LIBRARY; nccl/loader.h), so the GPU machine's own libraries are the ones tested.
# gpu-multirank.sh (several ranks on one GPU, nccl-tests side by side) builds NCCL >= 2.30 and
# nccl-tests there from sources, which must travel (the GPU machine reaches no network): give
#   NCCL_SRC_TAR=nccl.tar.xz        # top folder nccl/, e.g. git -C NCCL_CLONE archive
#                                   #   --prefix=nccl/ v2.30.7-1 | xz >nccl.tar.xz   (~2.9 MB)
#   NCCL_TESTS_SRC_TAR=nccl-tests.tar.xz   # top folder nccl-tests/, tag v2.19.6 (~60 KB)
# and they are packed as src/nccl.tar.xz and src/nccl-tests.tar.xz (without: its steps SKIP).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
dest="${2:-$root/.gpu}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
out="$stage/twinccl-gpu"
programs=(backends/gpu_checks cli/twinccl bench/bench_nccl_overhead examples/example_quickstart
  examples/example_fsdp_step examples/example_dp_tp_2d examples/example_clip_gather_backward)
for p in "${programs[@]}"; do
  [ -x "$build/$p" ] || { echo "gpu-bundle: $build/$p is missing: build with -DTWINCCL_WITH_NCCL=ON first" >&2; exit 1; }
done
mkdir -p "$out/bin" "$out/lib"
for p in "${programs[@]}"; do
  strip -o "$out/bin/$(basename "$p")" "$build/$p"
done
# Every shared library the programs load, except the C runtime the GPU machine has (newer).
ldd "${programs[@]/#/$build/}" | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
cp "$root/scripts/gpu-bundle-checks.sh" "$root/scripts/gpu-multirank.sh" "$out/"
for src in "${NCCL_SRC_TAR:-}:nccl" "${NCCL_TESTS_SRC_TAR:-}:nccl-tests"; do
  tarball="${src%:*}"
  [ -n "$tarball" ] || continue
  [ -f "$tarball" ] || { echo "gpu-bundle: $tarball is missing" >&2; exit 1; }
  mkdir -p "$out/src"
  cp "$tarball" "$out/src/${src##*:}.tar.xz"
done
git -C "$root" rev-parse --short HEAD >"$out/commit" 2>/dev/null || echo unknown >"$out/commit"
mkdir -p "$dest"
tar cJf "$dest/twinccl-gpu.tar.xz" -C "$stage" twinccl-gpu
du -sh "$out" "$dest/twinccl-gpu.tar.xz"
