"""The profiler from Python (docs/profiling.md): `with frit.profile() as p:` records every kernel
launch and compile pass of the process (the C profiler, src/runtime/profile.c) and, while it
records, the `file:line` of the user code that created each lazy op (the first stack frame
outside the frit package), so that each kernel is named by the line that made it."""
import ctypes as C
import json
import os
import sys
import tempfile

from . import _lib as L
from ._errors import FritError

lib = L.lib
_p = C.c_void_p
lib.frit_profile_start.restype = None
lib.frit_profile_start.argtypes = []
lib.frit_profile_stop.restype = None
lib.frit_profile_stop.argtypes = []
lib.frit_profile_active.restype = C.c_int
lib.frit_profile_active.argtypes = []
lib.frit_profile_save.restype = C.c_int
lib.frit_profile_save.argtypes = [_p, C.c_char_p]
lib.frit_profile_note_site.restype = C.c_int
lib.frit_profile_note_site.argtypes = [_p, _p, C.c_char_p]
lib.frit_profile_summary.restype = C.c_int
lib.frit_profile_summary.argtypes = [_p, C.c_char_p, _p]
lib.frit_machine_limits.restype = C.c_int
lib.frit_machine_limits.argtypes = [_p, C.POINTER(C.c_double), C.POINTER(C.c_double)]

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _State:
    # on: frit._array.apply notes call sites (a profile records). Read on every lazy op, so a
    # plain attribute: the cost when off is one attribute load.
    on = False


P = _State()
_env = os.environ.get("FRIT_PROFILE", "")
if _env.endswith(".json"):  # the C side saves the trace at exit; sites are wanted from the start
    P.on = True


def site():
    """'file:line' of the innermost caller outside the frit package."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    return "%s:%d" % (f.f_code.co_filename, f.f_lineno) if f is not None else None


def note(ctx_ptr, t, s):
    """Tells the C profiler that tensor t (in ctx) was created at site s."""
    if s is not None:
        lib.frit_profile_note_site(ctx_ptr, t, s.encode())


def _ctx():
    from ._session import current
    return current()


class Profile:
    """A profile of the code run inside `with frit.profile() as p:`. Arrays are lazy: realise
    what you want timed inside the block (frit.realize, np.asarray, .item()). One profile records
    at a time (the C profiler is process-wide): starting one drops the events of the last.

    p.trace    the Chrome trace (dict) once the block has ended; p.save(path) writes it (open it
               in https://ui.perfetto.dev); p.kernels() its kernel events; p.table() the summary
               `frit profile run.json` prints (kernels by total time, GB/s, GFLOP/s and their
               fraction of the machine limits, then the compile passes)."""

    def __init__(self):
        self.trace = None
        self._text = None

    def __enter__(self):
        if lib.frit_profile_active() and not P.on:
            raise FritError("frit.profile: a profile is already recording")
        self._was_on = P.on
        P.on = True
        lib.frit_profile_start()
        return self

    def __exit__(self, *exc):
        # a block that raised still leaves a complete trace of what ran
        lib.frit_profile_stop()
        P.on = self._was_on
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            sess = _ctx()
            if lib.frit_profile_save(sess.ptr, path.encode()) != 0:
                raise sess.error()
            with open(path) as f:
                self._text = f.read()
        finally:
            os.unlink(path)
        self.trace = json.loads(self._text)
        return False

    def _need(self):
        if self._text is None:
            raise FritError("frit.profile: the profile has not ended (use it after the with block)")

    def save(self, path):
        """Writes the Chrome trace / Perfetto JSON to path."""
        self._need()
        with open(path, "w") as f:
            f.write(self._text)

    def kernels(self):
        """The kernel launch events (dicts with name, ts, dur in us, and args)."""
        self._need()
        return [e for e in self.trace["traceEvents"] if e.get("cat") == "kernel"]

    def table(self):
        """The summary as text (also what `frit profile trace.json` prints)."""
        self._need()
        return summary_of_text(self._text)

    def __str__(self):
        return self.table() if self._text is not None else "<frit.profile, recording>"


def summary_of_text(text):
    from ._session import capture_file
    fd, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        sess = _ctx()
        st = []
        out = capture_file(lambda fp: st.append(lib.frit_profile_summary(sess.ptr, path.encode(), fp)))
        if st and st[0] != 0:
            raise sess.error()
        return out
    finally:
        os.unlink(path)


def machine_limits():
    """(copy GB/s, FMA GFLOP/s) of this machine as the profiler divides by (measured once,
    cached on disk beside the kernel cache)."""
    sess = _ctx()
    bw, fl = C.c_double(), C.c_double()
    if lib.frit_machine_limits(sess.ptr, C.byref(bw), C.byref(fl)) != 0:
        raise sess.error()
    return bw.value, fl.value


def profile():
    """`with frit.profile() as p: ...` then `print(p.table())`, `p.save("trace.json")`."""
    return Profile()
