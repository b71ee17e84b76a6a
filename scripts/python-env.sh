#!/usr/bin/env bash
# The Python environment of the tests (scripts/test.sh): <repo>/.venv (gitignored), a link to a
# virtual environment kept once per machine and user (${XDG_CACHE_HOME:-~/.cache}/twinccl/venv), so
# that every clone — CI's fresh clone included — reuses it instead of downloading torch again
# (pip's cache does not keep the ~5 GB of torch's nvidia-* wheels on these machines). It is a venv
# of Debian's /usr/bin/python3 that sees Debian's packages (--system-site-packages: numpy, pytest,
# from scripts/install-deps.sh --tests) and adds what PyPI has newer (below).
# CTest's python tests `pip install .` the package into it and import it from there, as users do.
# Quick when already done: it reinstalls only when the list below changed.
#   TWINCCL_VENV=DIR   the environment itself somewhere else (then no link is made)
set -euo pipefail
cd "$(dirname "$0")/.."

# What the tests need from PyPI, one requirement a line: add yours here with why.
requirements=(
  "torch>=2"                  # python/tests: torch tensors, torch.distributed's ProcessGroup
  "scikit-build-core>=0.10"   # pip install --no-build-isolation . (CTest's python.install)
  "pybind11>=2.12,<4"         # the same; >= 2.12 builds for NumPy 1.x and 2.x
  "mindspore==2.9.0"          # python/tests/test_mindspore_real.py (2.10 needs numpy >= 1.25)
  "accelerate>=1.0"           # python/tests/test_rank_state_libraries.py: Hugging Face's state
  "lightning>=2.2"            # the same: Lightning's rank_zero_only, its import-time logging
  "numpy<1.25"                # keep Debian's numpy 1.24: mindspore's scipy would raise it
)

if [ -n "${TWINCCL_VENV:-}" ]; then
  venv="$TWINCCL_VENV"
else
  venv="${XDG_CACHE_HOME:-$HOME/.cache}/twinccl/venv"
  if [ -e .venv ] && [ ! -L .venv ]; then
    echo "python-env: $PWD/.venv exists and is not a link to $venv: remove it to use the shared one" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$venv")"
  ln -sfn "$venv" .venv
fi
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
