"""The op matrix (issue 10): every row of tests/python/opmatrix/rows_*.py, on each of its dtypes, in
every mode (eager, jit at two sizes, the reference interpreter), checked against numpy for values,
shape and dtype; plus a test that every public function of frit has a row.

Batched by default (one compiled program per row x dtype x mode, holding all the row's cases):
the C compiler dominates the cost. FRIT_MATRIX_FULL=1 runs every case on its own (slower, and
a failure is then attributed without the batch). docs/testing.md describes the matrix."""
import glob
import importlib
import os
import re
import warnings
import zlib

import numpy as np
import pytest

import frit
from opmatrix.spec import MODES
from util import assert_close, assert_exact

HERE = os.path.dirname(os.path.abspath(__file__))
FULL = os.environ.get("FRIT_MATRIX_FULL") == "1"
# FRIT_MATRIX_SAMPLE="k/n": only the rows whose id hashes to k mod n (the CI pass that runs the
# compiled modes again with FRIT_SPECIALISE=always uses a sample: every kernel is compiled twice)
_SAMPLE = tuple(int(v) for v in os.environ.get("FRIT_MATRIX_SAMPLE", "0/1").split("/"))
N1, N2 = 5, 7  # the two sizes of the jit mode (neither equals a fixed dim 0..4 of the cases)
NP_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"}
# Errors frit may raise where numpy raises (numpy's AxisError is a ValueError and an IndexError).
ERRORS = (frit.FritError, TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError,
          NotImplementedError)

# Known bugs of other components, fixed on other branches: (regex on the item id
# "row-dtype-mode", reason). strict=False, so a fix shows as XPASS.
KNOWN_BUGS = [
    # jit limitations, not wrong answers: these trace per concrete shape (the values are still
    # checked in the other modes and in each function's own tests)
    (r"^fft\.\w+-.*-jit$", "fft: the transform length must be static under jit, so jit traces "
     "per shape (docs/complex.md)"),
    (r"^tensordot#2-.*-jit$", "contracting symbolic dims needs their static sizes: jit traces "
     "per shape"),
    (r"^vdot-complex.*-jit$", "vdot flattens with reshape(-1), which needs static shapes under jit"),
    (r"^(unstack|split|array_split)(#\d+)?-.*-jit$", "the number of pieces depends on the axis "
     "length: jit traces per shape (documented)"),
    (r"^unique#2-.*-jit$", "unique(axis=k) needs the other axes static: jit traces per shape"),
    (r"^repeat#3-.*-jit$", "per-element repeat counts need the static axis size: jit traces per shape"),
    (r"^(diagonal|trace|einsum#[25]|linalg\.(diagonal|trace))-.*-jit$", "a RESHAPE between products "
     "of symbolic dims is not proven to keep the element count (products of symbolic dims have "
     "no canonical form in the simplifier): jit traces per shape"),
    (r"^linalg\.(svd|svdvals|qr|pinv|matrix_rank|lstsq|matrix_norm|cross|tensordot|outer)(#\d+)?-.*-jit$",
     "needs static matrix dims under jit, so jit traces per shape (docs/linalg.md)"),
]



# ---------------------------------------------------------------- collecting rows

def _load_rows():
    rows = []
    for path in sorted(glob.glob(os.path.join(HERE, "opmatrix", "rows_*.py"))):
        mod = importlib.import_module("opmatrix." + os.path.basename(path)[:-3])
        rows += [(mod.__name__.split(".")[-1], r) for r in getattr(mod, "ROWS", [])]
    return rows


ROWS = _load_rows()


def _row_ids():
    seen, ids = {}, []
    for _, r in ROWS:
        k = seen[r.name] = seen.get(r.name, 0) + 1
        ids.append(r.name if k == 1 else "%s#%d" % (r.name, k))
    return ids


ROW_IDS = _row_ids()


def _fast_dtypes(row, rid, mode):
    """The dtypes a compiled mode runs in the default (fast) matrix. Every kernel costs a C
    compile (~20 ms), and rows x dtypes x cases is ~15,000 kernels per mode: by default each
    row x dtype is compiled in ONE of eager/jit (alternating, from a per-row offset), while the
    interpreter runs all of them. FRIT_MATRIX_FULL=1 runs every dtype in every mode."""
    dts = [d for d in row.dtypes if d in NP_DTYPES]
    if FULL or mode == "interp" or len(row.modes) < 3:
        return dts
    k = zlib.crc32(rid.encode()) & 1
    return dts[k::2] if mode == "eager" else dts[1 - k::2]


# FRIT_DEVICE=opencl runs the compiled modes on that device (CI: PoCL); complex dtypes are refused
# there with a clear error (docs/devices.md), so they are skipped, not failed.
DEVICE = os.environ.get("FRIT_DEVICE") or "cpu"


def _items():
    for (src, row), rid in zip(ROWS, ROW_IDS):
        if zlib.crc32(rid.encode()) % _SAMPLE[1] != _SAMPLE[0]:
            continue
        for dt in row.dtypes:
            for mode in MODES:
                iid = "%s-%s-%s" % (rid, dt, mode)
                marks = []
                if dt in NP_DTYPES and mode in row.modes and dt not in _fast_dtypes(row, rid, mode):
                    other = "jit" if mode == "eager" else "eager"
                    marks.append(pytest.mark.skip(reason="fast matrix: compiled in the %s mode "
                                                  "(FRIT_MATRIX_FULL=1 runs it)" % other))
                elif mode not in row.modes:
                    marks.append(pytest.mark.skip(reason="%s: mode left out: %s" % (mode, row.why)))
                elif dt not in NP_DTYPES:
                    marks.append(pytest.mark.skip(reason="%s has no numpy dtype" % dt))
                elif DEVICE != "cpu" and dt.startswith("complex") and mode != "interp":
                    marks.append(pytest.mark.skip(reason="complex dtypes are not supported on %s yet"
                                                  % DEVICE))
                else:
                    why = (row.xfail.get("%s:%s" % (mode, dt)) or row.xfail.get(mode)
                           or row.xfail.get(dt) or row.xfail.get("*"))
                    if why is None:
                        why = next((w for p, w in KNOWN_BUGS if re.search(p, iid)), None)
                    if why:
                        marks.append(pytest.mark.xfail(reason=why, strict=False))
                yield pytest.param(row, rid, dt, mode, id=iid, marks=marks)


# ---------------------------------------------------------------- cases and views

def _seed(rid, dt, n):
    return zlib.crc32(("%s|%s|%d" % (rid, dt, n)).encode())


class View:
    """A numpy input made non-contiguous by spec.array: the contiguous base it views and how, so
    frit sees the same view built by its own ops (a transpose, a strided or a reversed slice)."""

    def __init__(self, base, how):
        self.base, self.how = base, how

    def apply(self, xp, b):
        if self.how == "t":
            return xp.permute_dims(b, tuple(range(b.ndim))[::-1])
        if self.how == "s":
            return b[..., ::2]
        if self.how == "r":
            return b[(slice(None, None, -1),) * b.ndim]
        return b


def _view_of(a):
    b = a.base
    if (a.flags.c_contiguous or a.size == 0 or not isinstance(b, np.ndarray)
            or not b.flags.c_contiguous or b.dtype != a.dtype):
        return None
    for how, v in (("t", b.T), ("s", b[..., ::2] if b.ndim else b),
                   ("r", b[(slice(None, None, -1),) * b.ndim])):
        if (v.shape == a.shape and v.strides == a.strides
                and v.__array_interface__["data"][0] == a.__array_interface__["data"][0]):
            return View(b, how)
    return None


# Under jit, a stepped slice of a symbolic dim (x[..., ::2]) cannot be traced yet ("RESHAPE
# changes the number of elements", frit_slice's strided() on a symbolic length), so jit falls
# back to per-shape tracing. Until that is fixed, the jit mode gets strided inputs as contiguous
# arrays; rows_indexing.py has the xfailed row "Array.__getitem__" (stepped) showing the bug.
JIT_STRIDED_VIEWS = False


class _Static:
    """A slice (unhashable before Python 3.12) as a static jit argument."""

    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return hash(repr(self.v))

    def __eq__(self, other):
        return type(other) is _Static and repr(other.v) == repr(self.v)


def _split(x, jit=False):
    """(leaf tree, rebuild): numpy arrays become fresh contiguous copies (the leaves given to
    frit), remembering any view to rebuild with frit ops; other values pass through."""
    if isinstance(x, np.ndarray):
        v = _view_of(x)
        if v is not None and not (jit and v.how == "s" and not JIT_STRIDED_VIEWS):
            return v.base.copy(), v
        return np.array(x, order="C", copy=True), None
    if jit and isinstance(x, slice):
        return _Static(x), None
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        parts = [_split(e, jit) for e in x]
        return type(x)(p[0] for p in parts), [p[1] for p in parts]
    return x, None


def _rebuild(xp, leaf, how, conv):
    if isinstance(how, list):
        return type(leaf)(_rebuild(xp, e, h, conv) for e, h in zip(leaf, how))
    if isinstance(leaf, _Static):
        return leaf.v
    if isinstance(leaf, (np.ndarray, frit.Array)):
        b = conv(leaf)
        return how.apply(xp, b) if how is not None else b
    return leaf


def _np_copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_np_copy(e) for e in x)
    return x


def _leaves(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r += _leaves(o)
        return r
    return [out]


def _describe(args):
    def d(x):
        if isinstance(x, np.ndarray):
            lay = "" if x.flags.c_contiguous else " strides=%s" % (x.strides,)
            return "%s%s%s" % (x.dtype, list(x.shape), lay)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return "[%s]" % ", ".join(d(e) for e in x)
        return repr(x)
    return "(%s)" % ", ".join(d(a) for a in args)


# ---------------------------------------------------------------- the numpy oracle

def _numpy(row, args):
    """('ok', [numpy leaves]) or ('raise', exception)."""
    f = row.np_fn or row.fn
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = f(np, *_np_copy(args))
        except Exception as e:  # noqa: BLE001 - numpy's refusal is the expectation
            return "raise", e
    return "ok", [np.asarray(o) for o in _leaves(out)]


def _tols(row, dt):
    rtol, atol = row.rtol, row.atol
    if dt == "float16":  # float16's eps is 2**-10: a few of its ulps at least
        rtol, atol = max(rtol, 4 * 2.0 ** -10), max(atol, 4 * 2.0 ** -10)
    return rtol, atol


def _compare(row, dt, got, want, what):
    """None, or the message saying how a result differs from numpy's."""
    try:
        got = [np.asarray(g) for g in got]
        if len(got) != len(want):
            return "%s: %d outputs, numpy %d" % (what, len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want)):
            w_ = "%s out %d" % (what, k) if len(want) > 1 else what
            if g.shape != w.shape:
                return "%s: shape %s, numpy %s" % (w_, g.shape, w.shape)
            if row.check_dtype and g.dtype != w.dtype:
                return "%s: dtype %s, numpy %s" % (w_, g.dtype, w.dtype)
            exact = row.exact
            if exact is None:
                exact = w.dtype.kind not in "fc" or g.dtype.kind not in "fc"
            if exact:
                assert_exact(g, w, w_)
            else:
                rtol, atol = _tols(row, str(w.dtype))  # the result's float type (int -> f16)
                assert_close(g, w, rtol, atol, w_)
    except AssertionError as e:
        return str(e)
    return None


def _check_custom(row, got, args, what):
    try:
        got = [np.asarray(g) for g in got]
        row.check(got[0] if len(got) == 1 else tuple(got), *args)
    except AssertionError as e:
        return "%s: %s" % (what, e)
    return None


# ---------------------------------------------------------------- modes
# One row runs all its dtypes together per mode (one realisation, one jitted function): each C
# compile costs ~0.1 s, so batching rows x dtypes is what keeps the matrix at minutes. A batch
# that fails as a whole is retried per dtype, then per case, so errors stay attributed.

_INTERP = None


def _interp_session():
    global _INTERP
    if _INTERP is None:
        _INTERP = frit.Session(interpret=True)
    return _INTERP


def _cases(row, rid, dt, n):
    return row.cases(np.random.default_rng(_seed(rid, dt, n)), n, dt)


def _expect(row, cases):
    return [_numpy(row, a) if row.check is None else ("ok", None) for a in cases]


def _eager_build(row, args):
    leaf, how = _split(list(args))
    return _leaves(row.fn(frit, *_rebuild(frit, leaf, how, frit.asarray)))


def _result_check(row, dt, got, args, want, what):
    if row.check is not None:
        return _check_custom(row, got, args, what)
    return _compare(row, dt, got, want, what)


def _run_eager(row, rid, dts, mode):
    """Eager (or interp) mode: build every case of every dtype, realise them together, compare
    case by case. Returns {dtype: [error messages]}."""
    errs = {dt: [] for dt in dts}
    built = []  # (dt, case index, args, expectation, outputs)
    for dt in dts:
        cases = _cases(row, rid, dt, N1)
        expect = _expect(row, cases)
        for i, args in enumerate(cases):
            st, want = expect[i]
            what = "%s case %d %s" % (mode, i, _describe(args))
            try:
                outs = _eager_build(row, args)
            except ERRORS as e:
                if st != "raise" and row.check is None:
                    errs[dt].append("%s: raised %s: %s; numpy gives a result"
                                    % (what, type(e).__name__, e))
                continue
            if st == "raise" and row.check is None:
                # numpy refused at once; frit may refuse when the value is realised
                try:
                    frit.realize(*[o for o in outs if isinstance(o, frit.Array)])
                    [np.asarray(o) for o in outs]
                except ERRORS:
                    continue
                errs[dt].append("%s: numpy raises %s: %s; frit returned a result"
                                % (what, type(want).__name__, want))
                continue
            built.append((dt, i, args, want, outs))
    arrays = [o for b in built for o in b[4] if isinstance(o, frit.Array)]
    if not FULL and arrays:
        try:
            frit.realize(*arrays)
        except ERRORS:
            pass  # attributed below, case by case
    for dt, i, args, want, outs in built:
        what = "%s case %d %s" % (mode, i, _describe(args))
        try:
            got = [np.asarray(o) for o in outs]
        except ERRORS as e:
            errs[dt].append("%s: realising raised %s: %s" % (what, type(e).__name__, e))
            continue
        m = _result_check(row, dt, got, args, want, what)
        if m:
            errs[dt].append(m)
    return errs


def _jit_fn(row, hows):
    def f(cases):
        return tuple(tuple(_leaves(row.fn(frit, *_rebuild(frit, leaf, how, lambda b: b))))
                     for leaf, how in zip(cases, hows))
    f.__name__ = "matrix_" + re.sub(r"\W", "_", row.name)
    return f


def _same_scalars(a, b):
    """b's structure with a's non-array values (Python scalars, axes): the second jit call then
    differs from the first only in array shapes, so the compiled code must be reused."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return b
    if (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
            and type(a) is type(b) and not hasattr(a, "_fields")):
        return type(a)(_same_scalars(x, y) for x, y in zip(a, b))
    return a if not isinstance(b, np.ndarray) else b


def _jit_group(row, items, errs):
    """One jitted function over items [(dt, i, args@n1, want@n1, args@n2, want@n2)], called at
    both sizes. Returns False when it raised as a whole (the caller splits the group)."""
    s1 = [_split(list(it[2]), True) for it in items]
    s2 = [_split(list(it[4]), True) for it in items]
    g = frit.jit(_jit_fn(row, [h for _, h in s1]))
    msgs = []
    for size, sp, ai, wi in ((N1, s1, 2, 3), (N2, s2, 4, 5)):
        try:
            out = g([lf for lf, _ in sp])
        except ERRORS as e:
            if len(items) > 1:
                return False
            dt, i = items[0][:2]
            errs[dt].append("jit n=%d case %d %s: raised %s: %s"
                            % (size, i, _describe(items[0][ai]), type(e).__name__, e))
            return True
        for it, got in zip(items, out):
            what = "jit n=%d case %d %s" % (size, it[1], _describe(it[ai]))
            m = _result_check(row, it[0], got, it[ai], it[wi], what)
            if m:
                msgs.append((it[0], m))
        if size == N1:
            if g.fallback_count and not row.retrace_ok:
                if len(items) > 1:
                    return False  # find the dtype/case that cannot be traced symbolically
                msgs.append((items[0][0], "jit case %d: could not trace with symbolic shapes (fell "
                             "back to tracing per concrete shape): %s"
                             % (items[0][1], _dynamic_error(g, s1))))
            fell_back = g.fallback_count
            k1 = g._signature(([lf for lf, _ in s1],), {})[0]
            k2 = g._signature(([lf for lf, _ in s2],), {})[0]
            traces = g.trace_count
        elif k1 == k2 and g.trace_count != traces and not row.retrace_ok and not fell_back:
            msgs.append((items[0][0], "jit: the second size (n=%d) traced again although the "
                         "argument signature is the same" % N2))
    for dt, m in msgs:
        errs[dt].append(m)
    return True


def _run_jit(row, rid, dts):
    errs = {dt: [] for dt in dts}
    good = []
    for dt in dts:
        c1, c2 = _cases(row, rid, dt, N1), _cases(row, rid, dt, N2)
        if len(c1) != len(c2):
            c2 = c1  # a row whose case list depends on n: the second call repeats the first size
        c2 = [_same_scalars(a, b) for a, b in zip(c1, c2)]
        e1, e2 = _expect(row, c1), _expect(row, c2)
        for i in range(len(c1)):
            if e1[i][0] == "ok" and e2[i][0] == "ok":
                good.append((dt, i, c1[i], e1[i][1], c2[i], e2[i][1]))
                continue
            # numpy refuses: frit must refuse too (traced on its own; errors come at trace time)
            args, want = (c1[i], e1[i][1]) if e1[i][0] == "raise" else (c2[i], e2[i][1])
            leaf, how = _split(list(args), True)
            try:
                [np.asarray(o) for o in _leaves(frit.jit(_jit_fn(row, [how]))([leaf]))]
            except ERRORS:
                continue
            errs[dt].append("jit case %d %s: numpy raises %s: %s; frit returned a result"
                            % (i, _describe(args), type(want).__name__, want))
    groups = [good] if not FULL else [[it] for it in good]
    while groups:
        grp = groups.pop()
        if grp and not _jit_group(row, grp, errs):
            by_dt = {}
            for it in grp:
                by_dt.setdefault(it[0], []).append(it)
            if len(by_dt) > 1:
                groups += list(by_dt.values())
            else:
                groups += [[it] for it in grp]
    return errs


def _dynamic_error(g, sp):
    key, data, sizes, trees, dts = g._signature(([lf for lf, _ in sp],), {})
    try:
        g._trace_locked(data, sizes, trees, dts, True)
    except Exception as e:  # noqa: BLE001 - the message is the report
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0])
    return "?"


# ---------------------------------------------------------------- the tests

_RESULTS = {}


def _mode_results(row, rid, mode):
    """{dtype: errors} of a row in one mode, computed once for all its dtypes."""
    key = (rid, mode)
    if key not in _RESULTS:
        dts = _fast_dtypes(row, rid, mode)
        if mode == "jit":
            _RESULTS[key] = _run_jit(row, rid, dts)
        elif mode == "interp":
            with _interp_session().as_current():
                _RESULTS[key] = _run_eager(row, rid, dts, mode)
        else:
            _RESULTS[key] = _run_eager(row, rid, dts, mode)
    return _RESULTS[key]


@pytest.mark.parametrize("row,rid,dt,mode", list(_items()))
def test_matrix(row, rid, dt, mode):
    errs = _mode_results(row, rid, mode)[dt]
    if errs:
        raise AssertionError("%s [%s, %s, %s]: %d problem(s)\n%s"
                             % (rid, dt, mode, row.why or "", len(errs), "\n".join(errs)))


# ---------------------------------------------------------------- coverage

# Public callables that have no row, each with the reason. Everything else exported by frit
# (and frit.nn, frit.random, frit.linalg, frit.fft) must be the name of a row.
EXEMPT = {
    # transforms of Python functions: every differentiable row is checked by test_grad_matrix.py,
    # the transforms themselves by test_autodiff.py
    "grad", "value_and_grad", "vjp", "jvp", "stop_gradient", "custom_vjp",
    # control flow and kernels: they take Python functions, tested in test_control*.py
    "kernel", "loop", "if_", "else_", "break_", "continue_", "var", "Var", "indices",
    "atomic_add", "atomic_min", "atomic_max", "atomic_and", "atomic_or", "atomic_xor",
    "atomic_exchange",  # only valid inside frit.kernel
    "scatter_add", "scatter_min", "scatter_max", "scatter_and", "scatter_or", "scatter_xor",
    "scatter_set",  # kernel-body scatters (frit._control), tested in test_control.py
    "set_bounds", "get_bounds",  # global option, tested in test_indexing.py
    "jit",  # the mode itself; test_jit.py
    "Session", "new_session", "current_session",  # sessions; the interp mode uses them
    "realize",  # the eager mode realises with it
    "Array", "DType", "dtype",  # classes / dtype lookup (dtype: test_array_api.py)
    "FritError", "FritTypeError",  # exception classes
    "from_dlpack",  # interop, test_interop.py
    "isdtype",  # returns a bool about a dtype, not an array: test_api_funcs.py
    "show_config",  # prints the configuration: test_install.py
    "profile", "machine_limits",  # the profiler, not array functions: test_profile.py
    # importers: they read files into models whose ops are checked against their own framework
    # (jax, the ONNX test data, torch) in test_stablehlo.py and test_onnx_*.py
    "import_stablehlo", "import_onnx",
}


def _public(mod, prefix=""):
    out = set()
    for n in dir(mod):
        if n.startswith("_"):
            continue
        v = getattr(mod, n)
        if isinstance(v, (frit.DType, type(frit))) or not callable(v):
            continue
        if isinstance(v, type) and issubclass(v, BaseException):
            continue  # exception classes (FritError re-exported by submodules)
        if prefix and (isinstance(v, type) or getattr(v, "__module__", "") != mod.__name__):
            continue  # result classes, and names a submodule imports (numpy, frit internals)
        out.add(prefix + n)
    return out


def test_every_public_function_has_a_row():
    names = _public(frit)
    for sub in ("nn", "random", "linalg", "fft"):
        m = getattr(frit, sub, None)
        if m is not None:
            names |= _public(m, sub + ".")
    have = {r.name for _, r in ROWS}
    missing = sorted(names - have - EXEMPT)
    assert not missing, ("public functions without an op-matrix row (add a Row in "
                         "tests/python/opmatrix/rows_<area>.py, or an exemption with its "
                         "reason in EXEMPT): %s" % ", ".join(missing))


def test_every_array_method_has_a_row():
    skip = {"device", "dtype", "itemsize", "nbytes", "ndim", "shape", "size",  # attributes
            "to_device", "numpy", "tolist"}  # conversions: test_interop.py / test_array_ops.py
    meths = {"Array." + n for n in dir(frit.Array) if not n.startswith("_") and n not in skip}
    ops = {"Array.__%s__" % o for o in (
        "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow "
        "matmul rmatmul and rand or ror xor rxor lshift rlshift rshift rrshift neg pos abs "
        "invert eq ne lt le gt ge getitem setitem iadd isub imul itruediv ifloordiv imod ipow "
        "iand ior ixor ilshift irshift imatmul").split()}
    have = {r.name for _, r in ROWS}
    missing = sorted((meths | ops) - have)
    assert not missing, "Array methods/operators without an op-matrix row: %s" % ", ".join(missing)


def test_matrix_size():
    """Not a check: prints the matrix size (rows x modes x dtypes) for the report."""
    items = sum(len(r.dtypes) * len(MODES) for _, r in ROWS)
    print("op matrix: %d rows, %d row x dtype x mode items" % (len(ROWS), items))
