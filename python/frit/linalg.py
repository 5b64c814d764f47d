"""frit.linalg: the array API 2023.12 linalg extension plus numpy.linalg's spellings. The
factorisations are C frontend ops (frit_linalg_*: one explicit kernel, one point per matrix of
the batch); the rest are compositions of frit ops. docs/linalg.md has tolerances and the
behaviour on singular input (LinAlgError, eagerly and from jitted calls)."""
import builtins
import ctypes as C
from collections import namedtuple

import numpy as np

from . import _dtypes as D
from . import _lib as L
from . import _ops as O
from . import _session as S
from ._array import Array, apply, operand
from ._diagonal import diagonal as _np_diagonal, trace as _np_trace
from ._errors import FritError, FritTypeError

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "trace", "vecdot", "vector_norm"]


class LinAlgError(FritError):
    """Numerical failure of a linalg function (singular matrix, not positive definite)."""


EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])

_p = C.c_void_p
_pp = C.POINTER(_p)
_lib = L.lib
for _name, _res, _args in [("frit_linalg_solve", _p, [_p, _p, _p]),
                           ("frit_linalg_inv", _p, [_p, _p]),
                           ("frit_linalg_det", _p, [_p, _p]),
                           ("frit_linalg_cholesky", _p, [_p, _p, C.c_int]),
                           ("frit_linalg_slogdet", C.c_int, [_p, _p, _pp, _pp]),
                           ("frit_linalg_qr", C.c_int, [_p, _p, C.c_int, _pp, _pp]),
                           ("frit_linalg_eigh", C.c_int, [_p, _p, _pp, _pp]),
                           ("frit_linalg_svd", C.c_int, [_p, _p, C.c_int, _pp, _pp, _pp]),
                           ("frit_tensor_of", _p, [_p, _p]),
                           ("frit_tensor_dim", _p, [_p, C.c_int]),
                           ("frit_tensor_ndim", C.c_int, [_p])]:
    _f = getattr(_lib, _name)
    _f.restype, _f.argtypes = _res, _args


# ---------------------------------------------------------------- multi-output ops
# A C op with several outputs builds one kernel; each output is its own lazy Array whose build
# function picks one of them. The outputs of one call share a memo (keyed by context and input
# tensors, as control._Recipe), so every replay of them builds the kernel once.
_MEMO_MAX = 16


class _Memo:
    __slots__ = ("cache",)

    def __init__(self):
        self.cache = {}


def _call_multi(ctx, ts, cname, params):
    outs = [_p() for _ in range(3)]
    f = getattr(_lib, cname)
    if cname == "frit_linalg_slogdet":
        st = f(ctx, ts[0], C.byref(outs[0]), C.byref(outs[1]))
    elif cname == "frit_linalg_qr":
        st = f(ctx, ts[0], params[0], C.byref(outs[0]), C.byref(outs[1]))
    elif cname == "frit_linalg_eigh":
        st = f(ctx, ts[0], C.byref(outs[0]), C.byref(outs[1]) if params[0] else None)
    else:  # svd: (u, s, vh) or s alone
        if params[1]:
            st = f(ctx, ts[0], params[0], C.byref(outs[0]), C.byref(outs[1]), C.byref(outs[2]))
        else:
            st = f(ctx, ts[0], 0, None, C.byref(outs[1]), None)
    return None if st != 0 else tuple(o.value for o in outs)


def _b_multi(ctx, ts, which, cname, params, memo):
    key = (ctx, tuple(ts))
    r = memo.cache.get(key)
    if r is None:
        r = _call_multi(ctx, ts, cname, params)
        if r is None:
            return None
        if len(memo.cache) >= _MEMO_MAX:
            memo.cache.clear()
        memo.cache[key] = r
    return r[which]


def _multi(x, cname, which, params=()):
    memo = _Memo()
    return [apply(_b_multi, [x], (w, cname, tuple(params), memo)) for w in which]


# ---------------------------------------------------------------- helpers

def _eager(a):
    return isinstance(a, Array) and not a._n.abstract


def _nohalf(x, op, square=None):
    """Checks like numpy.linalg: float16 -> TypeError; fewer than 2 dims and (square=True)
    non-square matrices -> LinAlgError (a FritError). Dims symbolic under jit are checked in C."""
    x = operand(x)
    if x.dtype in (D.float16, D.bfloat16):
        raise FritTypeError("linalg.%s: array type %s is unsupported in linalg" % (op, x.dtype))
    if square is not None:
        _mat(x, "linalg." + op, square)
    return x


def _mat(x, op, square=False):
    x = operand(x)
    if x.ndim < 2:
        raise LinAlgError("%s: %d-dimensional array given (shape %s, dtype %s). Array must be at "
                          "least two-dimensional" % (op, x.ndim, x.shape, x.dtype))
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError("%s: last 2 dimensions of the array must be square (shape %s, dtype %s)"
                          % (op, x.shape, x.dtype))
    return x


def _raise_if_nan(result, inputs, msg):
    """A NaN result from finite input is the kernel's failure flag: eagerly it raises here;
    while frit.jit traces, the flag becomes a hidden output the jitted call checks after each
    run (raising LinAlgError there). Inside kernels and host-loop bodies it stays NaN."""
    n = result._n
    if not n.abstract:
        r = np.asarray(result)
        if r.size and np.isnan(r).any() and builtins.all(np.isfinite(np.asarray(a)).all()
                                                          for a in inputs):
            raise LinAlgError(msg)
        return
    checks = getattr(n.sess, "trace_checks", None)
    if n.scope is not None or checks is None:
        return
    flag = O.any(O.isnan(result))
    for a in inputs:
        if a.dtype.kind == "f":
            flag = O.logical_and(flag, O.all(O.isfinite(a)))
    checks.append((flag, (LinAlgError, msg)))


def _float_dtype(x):
    """numpy.linalg's result dtype: float32/float64 kept, ints and bool -> float64."""
    k = x.dtype
    if k in (D.float32, D.float64):
        return k
    if k in (D.float16, D.bfloat16):
        raise FritTypeError("array type %s is unsupported in linalg" % k)
    return D.float64


def _eps(dt):
    return float(np.finfo(np.float32 if dt == D.float32 else np.float64).eps)


def _b_dimlen(ctx, ts, axis):
    return _lib.frit_tensor_of(ctx, _lib.frit_tensor_dim(ts[0], _lib.frit_tensor_ndim(ts[0]) + axis))


def _default_rtol(a, dt):
    """max(M, N) * eps: a Python float for static dims, else a 0-d array (symbolic dims)."""
    m, n = a.shape[-2], a.shape[-1]
    if m is not None and n is not None:
        return builtins.max(m, n) * _eps(dt)
    mn = O.maximum(apply(_b_dimlen, [a], (-2,)), apply(_b_dimlen, [a], (-1,)))
    return O.multiply(O.astype(mn, dt), O.asarray(_eps(dt), dtype=dt))


def _as(v, dt):
    return v if isinstance(v, Array) else O.asarray(v, dtype=dt)


# ---------------------------------------------------------------- factorisations

def _b_solve(ctx, ts):
    return _lib.frit_linalg_solve(ctx, ts[0], ts[1])


def _b_inv(ctx, ts):
    return _lib.frit_linalg_inv(ctx, ts[0])


def _b_det(ctx, ts):
    return _lib.frit_linalg_det(ctx, ts[0])


def _b_chol(ctx, ts, upper):
    return _lib.frit_linalg_cholesky(ctx, ts[0], upper)


# LU and Cholesky kernels cost about 30 us to build: eager replays take them from the memo
S.REPLAY_MEMO.update((_b_solve, _b_inv, _b_det, _b_chol))


def inv(a):
    """Inverse of each (..., M, M) matrix; LinAlgError("Singular matrix") on an exact zero
    pivot (a jitted call raises after its run; NaN inside host-loop bodies)."""
    a = _nohalf(a, "inv", True)
    r = apply(_b_inv, [a])
    _raise_if_nan(r, [a], "Singular matrix")
    return r


def solve(a, b):
    """numpy 2 semantics: b is a vector (M,) only when b.ndim == 1, else (..., M, K)."""
    a, b = _nohalf(a, "solve", True), _nohalf(b, "solve")
    if b.ndim == 1 and a.ndim >= 2:
        r = O.squeeze(apply(_b_solve, [a, O.expand_dims(b, -1)]), -1)
    else:
        r = apply(_b_solve, [a, b])
    _raise_if_nan(r, [a, b], "Singular matrix")
    return r


def det(a):
    """Determinant by LU with partial pivoting; 0 for a singular matrix."""
    return apply(_b_det, [_nohalf(a, "det", True)])


def slogdet(a):
    """(sign, logabsdet); (0, -inf) for a singular matrix."""
    s, l_ = _multi(_nohalf(a, "slogdet", True), "frit_linalg_slogdet", (0, 1))
    return SlogdetResult(s, l_)


def cholesky(a, upper=False):
    """Lower (or upper=True: upper) Cholesky factor from the lower triangle of a. Not positive
    definite: LinAlgError (as inv)."""
    a = _nohalf(a, "cholesky", True)
    r = apply(_b_chol, [a], (int(bool(upper)),))
    _raise_if_nan(r, [a], "Matrix is not positive definite")
    return r


_QR_MODES = {"reduced": 0, "complete": 1, "r": 2}


def qr(a, mode="reduced"):
    """Householder QR: mode 'reduced' (Q (..., M, K), R (..., K, N)), 'complete' or 'r'."""
    if mode not in _QR_MODES:
        raise FritError("qr: unrecognized mode %r (use 'reduced', 'complete' or 'r')" % (mode,))
    m = _QR_MODES[mode]
    a = _nohalf(a, "qr", False)
    if m == 2:
        return _multi(a, "frit_linalg_qr", (1,), (2,))[0]
    q, r = _multi(a, "frit_linalg_qr", (0, 1), (m,))
    return QRResult(q, r)


def _uplo(a, UPLO):
    if UPLO not in ("L", "U"):
        raise FritError("eigh: UPLO argument must be 'L' or 'U', got %r" % (UPLO,))
    a = _nohalf(a, "eigh", True)
    return O.matrix_transpose(a) if UPLO == "U" and a.ndim >= 2 else a


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (cyclic Jacobi)."""
    w, v = _multi(_uplo(a, UPLO), "frit_linalg_eigh", (0, 1), (1,))
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    return _multi(_uplo(a, UPLO), "frit_linalg_eigh", (0,), (0,))[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition (one-sided Jacobi): U, S (descending), Vh."""
    a = _nohalf(a, "svd", False)
    if not compute_uv:
        return svdvals(a)
    u, s, vh = _multi(a, "frit_linalg_svd", (0, 1, 2), (int(bool(full_matrices)), 1))
    return SVDResult(u, s, vh)


def svdvals(x):
    return _multi(_nohalf(x, "svdvals", False), "frit_linalg_svd", (1,), (0, 0))[0]


# ---------------------------------------------------------------- compositions

def _mT(x):
    return O.matrix_transpose(x)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """Pseudo-inverse via the SVD; singular values below rtol * max(S) are dropped (default
    rtol: max(M, N) * eps, as numpy 2)."""
    a = _mat(a, "pinv")
    dt = _float_dtype(a)
    if rcond is None:
        rcond = rtol
    if rcond is None:
        rcond = _default_rtol(a, dt)
    u, s, vh = svd(a, full_matrices=False)
    rc = _as(rcond, dt)
    if rc.ndim:
        rc = O.expand_dims(rc, -1)
    cut = O.multiply(O.max(s, axis=-1, keepdims=True), rc) if s.shape[-1] != 0 else s
    big = O.greater(s, cut)
    sinv = O.where(big, O.divide(1, O.where(big, s, 1)), 0)
    return O.matmul(_mT(vh) * O.expand_dims(sinv, -2), _mT(u))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above tol (default: S.max * max(M, N) * eps, or rtol * S.max)."""
    A = operand(A)
    if A.ndim < 2:
        return O.astype(O.any(O.not_equal(A, 0)), D.int64)
    s = svdvals(A)
    dt = _float_dtype(A)
    if tol is None:
        if rtol is None:
            rtol = _default_rtol(A, dt)
        rt = _as(rtol, dt)
        if rt.ndim:
            rt = O.expand_dims(rt, -1)
        tol = O.multiply(O.max(s, axis=-1, keepdims=True), rt) \
            if s.shape[-1] != 0 else O.zeros(s.shape[:-1] + (1,), dtype=dt)
    else:
        tol = O.expand_dims(O.asarray(tol), -1) if isinstance(tol, Array) and tol.ndim else tol
    return O.count_nonzero(O.greater(s, tol), axis=-1)


def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq: (x, residuals, rank, s) for 2-D a and 1-D/2-D b. residuals are
    empty unless rank == N < M; under jit (rank unknown while tracing) they are computed
    whenever M > N."""
    a, b = operand(a), operand(b)
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise LinAlgError("lstsq: a must be 2-D and b 1-D or 2-D, got shapes %s and %s"
                          % (a.shape, b.shape))
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError("lstsq: incompatible dimensions: a %s, b %s" % (a.shape, b.shape))
    dt = _float_dtype(a)
    if rcond is None:
        rcond = _default_rtol(a, dt)
    b2 = O.expand_dims(b, -1) if b.ndim == 1 else b
    u, s, vh = svd(a, full_matrices=False)
    cut = O.multiply(O.max(s), _as(rcond, dt)) if s.shape[-1] != 0 else 0
    big = O.greater(s, cut)
    sinv = O.where(big, O.divide(1, O.where(big, s, 1)), 0)
    x = O.matmul(_mT(vh), O.expand_dims(sinv, -1) * O.matmul(_mT(u), b2))
    rank = O.count_nonzero(big)
    resid_dt = x.dtype
    res = O.sum(O.square(O.subtract(O.matmul(a, x), b2)), axis=0)
    if b.ndim == 1:
        x = O.squeeze(x, -1)
    if _eager(rank) and m is not None and n is not None:
        rk = int(rank)
        if not (rk == n and m > n):
            res = O.zeros((0,), dtype=resid_dt)
        return x, res, rk, s
    if not (m is not None and n is not None and m > n):
        res = O.zeros((0,), dtype=resid_dt)
    return x, res, rank, s


def matrix_power(a, n):
    """a**n by repeated squaring; n < 0 inverts first (LinAlgError if singular)."""
    a = _mat(a, "matrix_power", square=True)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise FritTypeError("matrix_power: exponent must be an integer, got %s" % type(n).__name__)
    n = int(n)
    if n == 0:
        if None in a.shape:
            raise FritError("matrix_power: n=0 needs a static shape (got %s while tracing)"
                            % (a.shape,))
        return O.broadcast_to(O.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else O.matmul(result, base)
        n >>= 1
        if n:
            base = O.matmul(base, base)
    return result


def multi_dot(arrays):
    """numpy.linalg.multi_dot: the chain product in the cheapest order (dynamic programming on
    the static shapes; left to right when a dim is symbolic)."""
    arrays = [operand(x) for x in arrays]
    if len(arrays) < 2:
        raise FritError("multi_dot: expecting at least two arrays")
    first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_1d:
        arrays[0] = O.expand_dims(arrays[0], 0)
    if last_1d:
        arrays[-1] = O.expand_dims(arrays[-1], -1)
    for x in arrays:
        if x.ndim != 2:
            raise FritError("multi_dot: arrays must be 2-D (the first and last may be 1-D), "
                            "got shapes %s" % [y.shape for y in arrays])
    dims = [arrays[0].shape[0]] + [x.shape[1] for x in arrays]
    k = len(arrays)
    if None in dims:
        out = arrays[0]
        for x in arrays[1:]:
            out = O.matmul(out, x)
    else:
        cost = [[0] * k for _ in range(k)]
        split = [[0] * k for _ in range(k)]
        for ln in range(1, k):
            for i in range(k - ln):
                j = i + ln
                cost[i][j] = None
                for s in range(i, j):
                    c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                    if cost[i][j] is None or c < cost[i][j]:
                        cost[i][j], split[i][j] = c, s

        def build(i, j):
            if i == j:
                return arrays[i]
            s = split[i][j]
            return O.matmul(build(i, s), build(s + 1, j))
        out = build(0, k - 1)
    if first_1d:
        out = O.squeeze(out, 0)
    if last_1d:
        out = O.squeeze(out, -1)
    return out


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along axis (broadcast)."""
    x1, x2 = operand(x1), operand(x2)
    for x in (x1, x2):
        if x.ndim == 0 or not -x.ndim <= axis < x.ndim or x.shape[axis] != 3:
            raise FritError("cross: both inputs need size 3 along axis %d, got shapes %s and %s"
                            % (axis, x1.shape, x2.shape))
    x1, x2 = O.broadcast_arrays(x1, x2)
    a = O.moveaxis(x1, axis, -1)
    b = O.moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = O.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return O.moveaxis(c, -1, axis)


# ---------------------------------------------------------------- norms

def _norm_dtype(x, spectral=False, what="norm"):
    """x as a float array to take a norm of. A complex x becomes |x|, which determines every
    norm but the spectral ones (2, -2, 'nuc': their singular values need a complex SVD)."""
    if x.dtype.kind == "c":
        if spectral:
            raise FritError("%s: ord=2, -2 and 'nuc' are not supported for complex dtypes "
                            "(shape %s, dtype %s)" % (what, x.shape, x.dtype.name))
        return O.abs(x)
    return x if x.dtype.kind == "f" else O.astype(x, D.float64)


def _spectral(ord):
    return isinstance(ord, (str, int, float)) and ord in ("nuc", 2, -2)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Array API vector_norm: ord in {inf, -inf, 0, any real p}; axis None flattens."""
    x = _norm_dtype(operand(x))
    if axis is None:
        ax = tuple(range(x.ndim))
    else:
        ax = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    ax = tuple(a % x.ndim if x.ndim else a for a in ax)
    ab = O.abs(x)
    if ord == float("inf"):
        r = O.max(ab, axis=ax, keepdims=keepdims)
    elif ord == float("-inf"):
        r = O.min(ab, axis=ax, keepdims=keepdims)
    elif ord == 0:
        r = O.astype(O.count_nonzero(O.not_equal(x, 0), axis=ax, keepdims=keepdims), x.dtype)
    elif ord == 1:
        r = O.sum(ab, axis=ax, keepdims=keepdims)
    elif ord == 2:
        r = O.sqrt(O.sum(O.multiply(ab, ab), axis=ax, keepdims=keepdims))
    else:
        if isinstance(ord, str):
            raise FritError("vector_norm: invalid norm order %r for vectors" % (ord,))
        p = float(ord)
        r = O.power(O.sum(O.power(ab, p), axis=ax, keepdims=keepdims), 1.0 / p)
    return r


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Array API matrix_norm over the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    x = _norm_dtype(_mat(x, "matrix_norm"), _spectral(ord), "matrix_norm")
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims)


def _matrix_norm(x, ord, r, c, keepdims):
    """Matrix norm over the (row, col) axes r, c of a float array."""
    inf = float("inf")
    if ord in ("fro", None):
        out = O.sqrt(O.sum(O.multiply(x, x), axis=(r, c), keepdims=keepdims))
    elif ord in (1, -1, inf, -inf):
        col = ord in (1, -1)
        sums = O.sum(O.abs(x), axis=r if col else c, keepdims=True)
        red = O.max if ord in (1, inf) else O.min
        out = red(sums, axis=c if col else r, keepdims=True)
        if not keepdims:
            out = O.squeeze(out, (r, c))
    elif ord in ("nuc", 2, -2):
        y = O.moveaxis(x, (r, c), (-2, -1))
        s = svdvals(y)
        if ord == "nuc":
            out = O.sum(s, axis=-1)
        elif s.shape[-1] == 0:  # numpy: 0 for an empty matrix
            out = O.sum(s, axis=-1)
        else:
            out = (O.max if ord == 2 else O.min)(s, axis=-1)
        if keepdims:
            out = O.expand_dims(O.expand_dims(out, builtins.min(r, c)), builtins.max(r, c))
    else:
        raise FritError("matrix_norm: invalid norm order %r for matrices" % (ord,))
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms for 1-D (or one axis), matrix norms for 2-D (or two axes);
    ord=None is the 2-norm / Frobenius norm of everything when axis is None."""
    x = operand(x)
    matrix = (axis is None and x.ndim == 2) or (isinstance(axis, (tuple, list)) and len(axis) == 2)
    x = _norm_dtype(x, matrix and _spectral(ord), "norm")
    if axis is None:
        if ord is None or (ord in ("fro", "f") and x.ndim == 2) or (ord == 2 and x.ndim == 1):
            r = O.sqrt(O.sum(O.multiply(x, x)))
            if keepdims:
                r = O.reshape(r, (1,) * x.ndim)
            return r
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise FritError("norm: improper number of dimensions to norm (%d)" % x.ndim)
    elif not isinstance(axis, (tuple, list)):
        axis = (axis,)
    axis = tuple(a % x.ndim for a in axis)
    if len(axis) == 1:
        if isinstance(ord, str):
            raise FritError("norm: invalid norm order %r for vectors" % (ord,))
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) == 2:
        if axis[0] == axis[1]:
            raise FritError("norm: duplicate axes given")
        return _matrix_norm(x, "fro" if ord is None else ord, axis[0], axis[1], keepdims)
    raise FritError("norm: improper number of dimensions to norm")


# ---------------------------------------------------------------- array API spellings

def matmul(x1, x2, /):
    return O.matmul(x1, x2)


def matrix_transpose(x, /):
    return O.matrix_transpose(_mat(x, "matrix_transpose"))


def outer(x1, x2, /):
    x1, x2 = operand(x1), operand(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise FritError("linalg.outer: both inputs must be 1-D, got shapes %s and %s"
                        % (x1.shape, x2.shape))
    return O.outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    return O.tensordot(x1, x2, axes)


def vecdot(x1, x2, /, *, axis=-1):
    return O.vecdot(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """Array API: the offset diagonal of the last two axes."""
    return _np_diagonal(_mat(x, "diagonal"), offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """Array API: sum of the offset diagonal of the last two axes."""
    return _np_trace(_mat(x, "trace"), offset, -2, -1, dtype)
