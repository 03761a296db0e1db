#!/usr/bin/env bash
# Installs what building and testing the softmax compiler needs on Debian 12:
# LLVM/MLIR 22 (with lit and FileCheck), CMake, Ninja, a C++ compiler and
# Python 3 (with venv, pip, setuptools and wheel: the package's install
# test, scripts/test-install.sh; its headers: the package's launch module).
# Idempotent: packages already present are not fetched again.
# Works as root, or through sudo where it is available.
#
# The CUDA toolkit is not installed here. Without it the compiler, softmax-opt
# and the lit suite still build and run; only the ptxas checks are skipped and
# the PTX cannot be assembled into machine code.
set -euo pipefail

# Further packages a caller needs (scripts/fuzz.sh: clang-22 and libFuzzer)
# come as arguments.
packages=(cmake ninja-build g++ python3 python3-venv python3-pip
          python3-setuptools python3-wheel python3-dev libgtest-dev
          llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools "$@")

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup: error: missing packages: ${missing[*]}" >&2
    echo "setup: run this script as root or install sudo to install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get update -q ||
     ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    echo "setup: error: could not install: ${missing[*]}" >&2
    echo "setup: LLVM/MLIR 22 come from Debian 12's bookworm-security archive" >&2
    exit 1
  fi
fi

for tool in /usr/lib/llvm-22/bin/lit /usr/lib/llvm-22/bin/FileCheck \
            /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake; do
  if [ ! -e "$tool" ]; then
    echo "setup: error: $tool is missing after installing LLVM/MLIR 22" >&2
    exit 1
  fi
done

cuda=${CUDA_PATH:-/usr/local/cuda}
if [ -x "$cuda/bin/ptxas" ]; then
  echo "setup: CUDA toolkit found at $cuda (ptxas checks enabled)"
else
  echo "setup: note: no CUDA toolkit at $cuda (set CUDA_PATH to point at one);" \
       "the ptxas resource checks will be reported as unsupported"
fi
echo "setup: ready"
