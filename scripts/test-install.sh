#!/usr/bin/env bash
# Installs the rowred package (pip install of the repository root, offline:
# setup.py builds the runtime library with the runner-only CMake build) into
# a fresh virtual environment, checks that `import rowred` finds the
# installed copy and its runtime library from another directory, and runs
# the package's CPU tests against that copy; then installs it again from
# its source distribution and loads the runtime library. Python:
# $ROWRED_INSTALL_PYTHON,
# else Debian's /usr/bin/python3 (scripts/setup.sh installs its venv,
# setuptools and wheel), else python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$root/build/install-venv}
python=${ROWRED_INSTALL_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi

rm -rf "$venv"
# --system-site-packages: setuptools and wheel for the offline build.
"$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --no-build-isolation --no-index \
  "$root"

elsewhere=$(mktemp -d)
trap 'rm -rf "$elsewhere"' EXIT
cd "$elsewhere"
"$venv/bin/python" - "$venv" <<'PY'
import os, sys
import rowred
from rowred import _runtime
venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(rowred.__file__)
assert where.startswith(venv + os.sep), f"imported {where}, not the installed copy"
lib = os.path.realpath(_runtime.library()._name)
assert lib.startswith(venv + os.sep), f"runtime library {lib} is not the installed one"
print(f"installed: {os.path.dirname(where)} (runtime ABI "
      f"{_runtime.library().rowred_runtime_abi_version()})")
PY
ROWRED_TEST_INSTALLED=1 "$venv/bin/python" -m unittest discover \
  -s "$root/python/tests"

# The source distribution holds what its build needs (MANIFEST.in): built
# from the tree, installed over the first, and imported again.
(cd "$root" && "$venv/bin/python" setup.py -q sdist -d "$elsewhere/sdist" \
   >/dev/null 2>&1) || { echo "test-install: sdist failed" >&2; exit 1; }
"$venv/bin/python" -m pip install --quiet --no-build-isolation --no-index \
  --force-reinstall "$elsewhere"/sdist/rowred-*.tar.gz
"$venv/bin/python" -c "import rowred._runtime as r; r.library(); print('sdist: installed and loaded')"
