#!/usr/bin/env bash
# First command of the README: installs what is missing, builds in Release and runs the main job
# on its built-in default (`twinccl perf`: the nccl-tests-style table of all_reduce,
# reduce_scatter and all_gather). Arguments go to `twinccl perf`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/cli/twinccl perf "$@"
