#!/usr/bin/env bash
# Installs what TwinCCL needs from Debian/Ubuntu packages, only what is missing.
#   scripts/install-deps.sh          what the libraries and the `twinccl` program need (the README's
#                                    first command, scripts/setup-and-run.sh)
#   scripts/install-deps.sh --tests  also what the tests, benchmarks and the Python package need
#                                    (scripts/test.sh); the Python packages from PyPI (torch) go
#                                    into a virtual environment: scripts/python-env.sh
# Uses sudo when not root. CUDA and NCCL are optional and never installed here.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config ccache libsimgrid-dev libboost-dev nlohmann-json3-dev
          libfmt-dev libcli11-dev zlib1g-dev)
if [ "${1:-}" = --tests ]; then
  # catch2: the tests; clang-format-14: format.check; gnuplot-nox: `twinccl whatif` plots (tests);
  # python3-*: the Python package built by CMake, and the tests' virtual environment, which sees
  # Debian's numpy and pytest (scripts/python-env.sh adds torch 2.x from PyPI); python3-torch:
  # Debian's torch 1.13 for the CTest python.debian_torch (skipped without it). It is the heavy
  # one (measured on bookworm: 177 more packages, OpenCV/Qt/GDAL among them; 143 MB fetched,
  # 589 MB unpacked; unpacking them alone took 37 s on the loaded 2-core machine).
  packages+=(catch2 clang-format-14 gnuplot-nox
             python3-dev python3-venv python3-pybind11 python3-numpy python3-pytest python3-torch)
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/install-deps.sh [--tests]" >&2
  exit 2
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
