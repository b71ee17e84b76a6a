#!/usr/bin/env bash
# Second command of the README (and all that CI runs): installs what is missing (Debian packages,
# and the Python packages from PyPI into <repo>/.venv), builds with warnings as errors under CI,
# and runs the whole test suite with CTest; its Python tests `pip install .` the package into
# .venv and import it from there. GPU checks are reported as skipped (not passed) on machines
# without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
scripts/python-env.sh
scripts/build.sh -DTWINCCL_PYTHON_TEST_VENV="${TWINCCL_VENV:-$PWD/.venv}"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
[ "${TWINCCL_SKIP_SANITIZERS:-0}" = 1 ] || scripts/sanitizers.sh  # emu+core tests under TSan, ASan+UBSan (docs/misuse.md)
