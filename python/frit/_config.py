"""frit.__version__ and frit.show_config(): what this installation is and what it will use (the
library loaded, the C compiler and flags kernels are built with, the kernel cache, threads, and
which device backends work here)."""
import sys

import numpy as np

from . import _lib as L
from ._session import capture_file


def _version():
    # the loaded library's version (FRIT_VERSION_* in include/frit.h, its one source)
    return L.fn["frit_version"]().decode() if L.has("frit_version") else "unknown"


__version__ = _version()

# The device backends besides the host; a new one in src/backend/ is listed here.
_DEVICE_BACKENDS = ("opencl", "cuda")


def _probe(device):
    """"yes" when a one-kernel program runs on `device` and matches numpy, else why not."""
    from ._jit import jit
    from ._errors import FritError
    x = np.arange(4, dtype=np.float32)
    try:
        got = np.asarray(jit(lambda a: a * 2 + 1, device=device)(x))
    except FritError as e:
        return "no (%s)" % str(e).strip().splitlines()[0]
    return "yes" if np.array_equal(got, x * 2 + 1) else "no (wrong result: %s)" % got


def config(probe_devices=True):
    """The configuration as a dict of strings: version, library, the lines of frit_info (cc,
    cflags, cache, compiler, threads) and one entry per backend ("backend cpu": "yes", ...).
    probe_devices=False skips running a kernel on each device backend."""
    out = {"version": __version__, "library": L.library_path(), "numpy": np.__version__,
           "python": sys.version.split()[0]}
    ctx = L.fn["frit_ctx_new"]()
    try:
        text = capture_file(lambda f: L.fn["frit_info"](ctx, f))
    finally:
        L.fn["frit_ctx_free"](ctx)
    for line in text.splitlines():
        key, _, val = line.partition(": ")
        if key and key != "version":
            out[key] = val
    out["backend cpu"] = "yes (C kernels built by %s)" % out.get("cc", "cc")
    for d in _DEVICE_BACKENDS:
        out["backend " + d] = _probe(d) if probe_devices else "not probed"
    return out


def show_config(file=None, probe_devices=True):
    """Prints the version, the library loaded, the C compiler, flags and version kernels are built
    with, the kernel cache directory, the threads, and which backends work here (cpu always;
    opencl and cuda when a one-kernel program runs on them, else why not)."""
    file = file or sys.stdout
    for k, v in config(probe_devices).items():
        print("%-16s %s" % (k + ":", v), file=file)
