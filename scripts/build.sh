#!/usr/bin/env bash
# Configures and builds TwinCCL in build/ (Release). Warnings are errors when CI=true.
# Extra CMake arguments are passed through: scripts/build.sh -DTWINCCL_WITH_NCCL=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
# ccache when installed (TWINCCL_CCACHE=0: without): rebuilds are cheap, and CTest's package.subdirectory
# (TwinCCL's libraries built again inside a consumer project, with the same flags) hits its cache.
launcher=()
if [ "${TWINCCL_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# format.check (CTest, label format): every C++ file as .clang-format says (clang-format 14 from install-deps).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTWINCCL_WARNINGS_AS_ERRORS="$werror" -DTWINCCL_FORMAT_CHECK=ON \
  "${launcher[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)"
