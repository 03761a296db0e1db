#!/usr/bin/env bash
# Installs the rowred package (pip install of the repository root, offline:
# setup.py builds the runtime library with the runner-only CMake build, and
# the launch module) into a fresh virtual environment, checks that `import
# rowred` finds the installed copy, its runtime library and its launch
# module from another directory, and runs
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
launcher = _runtime.launcher()
assert launcher is not None, "the installed package has no rowred._launch"
built = os.path.realpath(launcher.__file__)
assert built.startswith(venv + os.sep), f"rowred._launch {built} is not the installed one"
print(f"installed: {os.path.dirname(where)} (runtime ABI "
      f"{_runtime.library().rowred_runtime_abi_version()}, launch module "
      f"{os.path.basename(built)})")
PY
ROWRED_TEST_INSTALLED=1 "$venv/bin/python" -m unittest discover \
  -s "$root/python/tests"

# The source distribution holds what its build needs (MANIFEST.in): built
# from the tree and installed over the first, with a pack built by the
# installed command bundled as the package's default pack.
(cd "$root" && "$venv/bin/python" setup.py -q sdist -d "$elsewhere/sdist" \
   >/dev/null 2>&1) || { echo "test-install: sdist failed" >&2; exit 1; }
opt=${ROWRED_SOFTMAX_OPT:-$root/build/bin/softmax-opt}
bundle=()
if [ -x "$opt" ]; then
  "$venv/bin/python" -m rowred.packs build --softmax-opt "$opt" \
    --out "$elsewhere/pack" --op softmax --dtype f32 --cols 64 >/dev/null
  bundle=(env ROWRED_BUNDLE_PACK="$elsewhere/pack")
fi
"${bundle[@]}" "$venv/bin/python" -m pip install --quiet --no-build-isolation \
  --no-index --force-reinstall "$elsewhere"/sdist/rowred-*.tar.gz
"$venv/bin/python" - "${#bundle[@]}" <<'PY'
import os, sys
import rowred
from rowred import _runtime, packs
_runtime.library()
pack = os.path.join(os.path.dirname(rowred.__file__), "pack")
if sys.argv[1] != "0":
    assert packs.Pack(pack).find("softmax", "f32", 64), "no bundled kernel"
    print("sdist: installed, runtime loaded, default pack bundled")
else:
    print("sdist: installed, runtime loaded (no softmax-opt: no pack bundled)")
PY
