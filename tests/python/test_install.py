"""Installing the Python package: `pip install .` into a fresh venv (which first gets setuptools,
wheel, numpy and Pillow from PyPI, cached after the first run; the builds then run without isolation)
builds nothing new when the checkout is built (make is a no-op) and puts libfrit.so inside the
package; `import frit` then works from another directory with no FRIT_* variables and no
PYTHONPATH, matching numpy, and docs/tutorial.md runs on it. Then `pip install -e .` in the same venv imports the checkout, and
without a C compiler pip install says what to install. Also where frit._lib looks for the
library, and frit.__version__ against include/frit.h. (`make wheel-check` builds the wheel the
long way: python -m build from the sdist.)"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import frit
import frit._lib as L

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _header_version():
    text = open(os.path.join(ROOT, "include", "frit.h")).read()
    return ".".join(re.search(r"^#define FRIT_VERSION_%s\s+(\d+)" % k, text, re.M).group(1)
                    for k in ("MAJOR", "MINOR", "PATCH"))


def test_version_is_the_headers():
    assert frit.__version__ == _header_version()


def test_show_config_names_compiler_cache_threads_backends(tmp_path, monkeypatch):
    import io
    monkeypatch.setenv("FRIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FRIT_THREADS", "3")
    out = io.StringIO()
    frit.show_config(file=out, probe_devices=False)
    text = out.getvalue()
    assert re.search(r"^version: +%s$" % re.escape(frit.__version__), text, re.M), text
    assert re.search(r"^cache: +%s$" % re.escape(str(tmp_path / "cache")), text, re.M), text
    assert re.search(r"^threads: +3 ", text, re.M), text
    assert re.search(r"^compiler: +\S", text, re.M), text
    for b in ("cpu", "opencl", "cuda"):
        assert re.search(r"^backend %s: +\S" % b, text, re.M), text


def test_show_config_probes_devices():
    """A device backend is reported as working only if a kernel really ran on it; otherwise the
    line carries the backend's own reason."""
    cfg = frit._config.config()
    for d in ("opencl", "cuda"):
        v = cfg["backend " + d]
        assert v == "yes" or (v.startswith("no (") and d in v), v


def test_library_path_order(tmp_path, monkeypatch):
    pkg, root = tmp_path / "site" / "frit", tmp_path / "checkout"
    pkg.mkdir(parents=True)
    (root / "build").mkdir(parents=True)
    monkeypatch.setattr(L, "_HERE", str(pkg))
    monkeypatch.setattr(L, "_ROOT", str(root))
    monkeypatch.delenv("FRIT_LIB", raising=False)
    with pytest.raises(ImportError, match="libfrit.so not found"):
        L.library_path()
    (root / "build" / "libfrit.so").write_bytes(b"")
    assert L.library_path() == str(root / "build" / "libfrit.so")
    (pkg / "libfrit.so").write_bytes(b"")
    assert L.library_path() == str(pkg / "libfrit.so")  # the packaged copy first
    monkeypatch.setenv("FRIT_LIB", "/elsewhere/libfrit.so")
    assert L.library_path() == "/elsewhere/libfrit.so"  # FRIT_LIB still overrides


_USE = r"""
import os, sys
import numpy as np
import frit, frit._lib
rng = np.random.default_rng(0)
X = rng.standard_normal((33, 3)).astype(np.float32)
@frit.jit
def f(x):
    d = frit.expand_dims(x, 0) - frit.expand_dims(x, 1)
    return frit.sqrt((d * d).sum(axis=-1) + 1).sum(axis=1)
d = X[None, :, :] - X[:, None, :]
want = np.sqrt((d * d).sum(-1) + 1).sum(1)
np.testing.assert_allclose(np.asarray(f(X)), want, rtol=1e-5)
print(frit.__version__, os.path.dirname(frit.__file__), frit._lib.library_path())
"""


def _clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FRIT_", "PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE"))}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")  # the kernel cache, not the library
    return env


def _use(venv, tmp_path):
    out = subprocess.run([os.path.join(venv, "bin", "python"), "-c", _USE], cwd=str(tmp_path),
                         env=_clean_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.split()


def test_pip_install_then_editable(tmp_path):
    venv = str(tmp_path / "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=120)
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check"]
    env = dict(os.environ, PIP_NO_INPUT="1")
    env.pop("PYTHONPATH", None)
    # the build requirements (pyproject.toml) and the dependency once, then builds without
    # isolation: three isolated builds would each fetch setuptools again (half this test's time)
    r = subprocess.run(pip + ["setuptools>=64", "wheel", "numpy", "Pillow"], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    pip += ["--no-build-isolation"]
    # no C compiler: the build stops before make, saying what to install
    r = subprocess.run(pip + [ROOT], env=dict(env, CC="frit-no-such-cc"), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode != 0
    assert "needs a C11 compiler and make" in r.stdout + r.stderr and "build-essential" in r.stdout + r.stderr, \
        r.stdout + r.stderr
    assert not os.path.exists(os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages", "frit"))

    r = subprocess.run(pip + [ROOT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    version, pkg, lib = _use(venv, tmp_path)
    assert version == _header_version()
    assert pkg.startswith(venv + os.sep), pkg  # the installed copy, not the checkout
    assert lib == os.path.join(pkg, "libfrit.so"), lib
    meta = [p for p in os.listdir(os.path.dirname(pkg)) if p.startswith("frit-") and p.endswith(".dist-info")]
    assert meta == ["frit-%s.dist-info" % version], meta
    text = open(os.path.join(os.path.dirname(pkg), meta[0], "METADATA")).read()
    assert re.findall(r"^Requires-Dist: (.*)$", text, re.M) == ["numpy"]
    # the tutorial runs on the installed package (Pillow, which frit.image uses, installed above)
    blocks = re.findall(r"^```python\n(.*?)^```", open(os.path.join(ROOT, "docs", "tutorial.md")).read(),
                        flags=re.S | re.M)
    (tmp_path / "tut").mkdir()
    (tmp_path / "tut" / "tutorial.py").write_text("\n".join(blocks))
    out = subprocess.run([os.path.join(venv, "bin", "python"), "tutorial.py"], cwd=str(tmp_path / "tut"),
                         env=_clean_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert (tmp_path / "tut" / "mandelbrot.png").exists()

    r = subprocess.run(pip + ["-e", ROOT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    version, pkg, lib = _use(venv, tmp_path)
    assert pkg == os.path.join(ROOT, "python", "frit"), pkg
    assert lib == os.path.join(ROOT, "build", "libfrit.so"), lib
