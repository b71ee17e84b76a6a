#!/usr/bin/env bash
# Installs what TwinCCL needs from Debian/Ubuntu packages, only what is missing.
# Uses sudo when not root. CUDA and NCCL are optional and never installed here.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libsimgrid-dev libboost-dev catch2 nlohmann-json3-dev
          libcli11-dev libfmt-dev zlib1g-dev ccache clang-format-14 gnuplot-nox
          python3-dev python3-pybind11 python3-numpy python3-pytest)
# torch is optional for the Python package (its torch tests skip without it) and large (about 180
# packages on a bare Debian 12): TWINCCL_SKIP_TORCH=1 leaves it out.
[ "${TWINCCL_SKIP_TORCH:-0}" = 1 ] || packages+=(python3-torch)
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
