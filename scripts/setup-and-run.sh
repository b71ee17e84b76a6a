#!/usr/bin/env bash
# First command of the README: installs what is missing, builds in Release and runs the main job
# on its built-in default (`twinccl perf`: the nccl-tests-style table of all_reduce,
# reduce_scatter and all_gather). Arguments go to `twinccl perf`.
# Only what that needs: the Debian packages of the libraries and the CLI (no test or Python
# packages) and the `twinccl` target with the libraries it links (no tests, examples, benchmarks,
# fuzz targets or Python package). scripts/test.sh installs and builds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
TWINCCL_BUILD_TARGETS=twinccl scripts/build.sh -DTWINCCL_BUILD_TESTS=OFF -DTWINCCL_BUILD_EXAMPLES=OFF \
  -DTWINCCL_BUILD_BENCHMARKS=OFF -DTWINCCL_BUILD_FUZZ=OFF -DTWINCCL_BUILD_PYTHON=OFF -DTWINCCL_FORMAT_CHECK=OFF
exec build/cli/twinccl perf "$@"
