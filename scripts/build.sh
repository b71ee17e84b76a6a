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
# Everything is built (tests, examples, CLI, benchmarks, fuzz targets, the Python package) unless the
# arguments say otherwise (scripts/setup-and-run.sh builds the libraries and the CLI only): the
# options are named here so that a build folder configured without them gets them back.
# format.check (CTest, label format): every C++ file as .clang-format says (clang-format 14 from install-deps).
everything=(-DTWINCCL_BUILD_TESTS=ON -DTWINCCL_BUILD_EXAMPLES=ON -DTWINCCL_BUILD_CLI=ON
            -DTWINCCL_BUILD_BENCHMARKS=ON -DTWINCCL_BUILD_FUZZ=ON -DTWINCCL_BUILD_PYTHON=AUTO -DTWINCCL_FORMAT_CHECK=ON)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTWINCCL_WARNINGS_AS_ERRORS="$werror" "${everything[@]}" \
  "${launcher[@]}" "$@" >/dev/null
# TWINCCL_BUILD_TARGETS="a b": only these targets and what they need (default: all).
targets=()
for t in ${TWINCCL_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
