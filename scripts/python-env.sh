#!/usr/bin/env bash
# The Python environment of the tests (scripts/test.sh): <repo>/.venv (gitignored), a virtual
# environment of Debian's /usr/bin/python3 that sees Debian's packages (--system-site-packages:
# numpy, pytest, from scripts/install-deps.sh --tests) and adds what PyPI has newer (below).
# CTest's python tests `pip install .` the package into it and import it from there, as users do.
# Quick when already done: it reinstalls only when the list below changed. pip's cache
# (~/.cache/pip) makes a reinstall fast (torch from PyPI brings ~5 GB of nvidia-* packages).
#   TWINCCL_VENV=DIR   another place for it
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${TWINCCL_VENV:-$PWD/.venv}"

# What the tests need from PyPI, one requirement a line: add yours here with why.
requirements=(
  "torch>=2"                  # python/tests: torch tensors, torch.distributed's ProcessGroup
  "scikit-build-core>=0.10"   # pip install --no-build-isolation . (CTest's python.install)
  "pybind11>=2.12,<4"         # the same; >= 2.12 builds for NumPy 1.x and 2.x
)

stamp="$venv/.twinccl-requirements"
wanted="$(printf '%s\n' "${requirements[@]}")"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  echo "python-env: $venv is up to date"
  exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "python-env: creating $venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
echo "python-env: installing ${requirements[*]}"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
printf '%s\n' "$wanted" >"$stamp"
