#!/bin/sh
# The wheel as a user makes it: `python -m build` (an sdist, then a wheel built from the sdist
# in an isolated environment, so the C library is compiled from scratch there), installed with
# its dependencies in a fresh venv, and used from a directory outside the checkout with no FRIT_*
# variables: a jitted program against numpy, frit.__version__, frit.show_config(). Needs PyPI
# (build, setuptools, numpy); a few minutes (the full C build). `make wheel-check`; not in CI.
set -e
PYTHON=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/frit-wheel-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset FRIT_LIB PYTHONPATH
"$PYTHON" -m venv "$tmp/tools"
"$tmp/tools/bin/pip" install -q --disable-pip-version-check build
"$tmp/tools/bin/python" -m build --outdir "$tmp/dist" "$root"
ls -l "$tmp/dist"
wheel=$(ls "$tmp/dist"/frit-*.whl)
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
mkdir "$tmp/elsewhere" && cd "$tmp/elsewhere"
env -u FRIT_CACHE_DIR XDG_CACHE_HOME="$tmp/cache" "$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import os, sys
import numpy as np
import frit
venv = sys.argv[1]
assert frit.__file__.startswith(venv + os.sep), frit.__file__
x = np.linspace(-3, 3, 1001).astype(np.float32)
f = frit.jit(lambda a: (frit.exp(-a * a) * frit.cos(a)).sum())
got, want = float(np.asarray(f(x))), float((np.exp(-x * x) * np.cos(x)).sum())
assert abs(got - want) <= 1e-4 * abs(want), (got, want)
print("wheel ok: frit", frit.__version__, "from", os.path.dirname(frit.__file__), got, "==", want)
frit.show_config()
PY
