#!/usr/bin/env bash
# Configures and builds TwinCCL in build/ (Release). Warnings are errors when CI=true.
# Extra CMake arguments are passed through: scripts/build.sh -DTWINCCL_WITH_NCCL=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTWINCCL_WARNINGS_AS_ERRORS="$werror" "$@" >/dev/null
cmake --build build -j "$(nproc)"
