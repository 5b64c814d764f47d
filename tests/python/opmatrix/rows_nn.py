"""Op-matrix rows of the neural-network functions (frit.<name> and frit.nn.<name>): conv2d,
max/avg pooling, softmax, log_softmax; numpy references written out here (explicit windows)."""
import numpy as np

from .spec import Row, FLOATS, array


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def np_conv2d(np_, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct (N, C, H, W) x (O, C/g, KH, KW) convolution in float64, the result in x's dtype."""
    s, p, d = _pair(stride), _pair(padding), _pair(dilation)
    xd = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (p[0],) * 2, (p[1],) * 2])
    n, c, h, wd = xd.shape
    o, cg, kh, kw = w.shape
    oh = (h - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd - d[1] * (kw - 1) - 1) // s[1] + 1
    if oh <= 0 or ow <= 0 or c != cg * groups or o % groups:
        raise ValueError("conv2d: bad shapes")
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xd[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                win = xs[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                         j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win,
                                                         w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b.astype(np.float64)[None, :, None, None]
    return out.astype(x.dtype)


def np_pool(kind):
    def f(np_, x, kernel, stride=None, padding=0):
        k = _pair(kernel)
        s = _pair(stride) if stride is not None else k
        p = _pair(padding)
        lead = x.shape[:-2]
        h, w = x.shape[-2:]
        oh = (h + 2 * p[0] - k[0]) // s[0] + 1
        ow = (w + 2 * p[1] - k[1]) // s[1] + 1
        fill = -np.inf if kind == "max" else np.nan
        xp = np.pad(x.astype(np.float64), [(0, 0)] * len(lead) + [(p[0],) * 2, (p[1],) * 2],
                    constant_values=fill)
        out = np.zeros(lead + (oh, ow))
        for i in range(oh):
            for j in range(ow):
                win = xp[..., i * s[0]: i * s[0] + k[0], j * s[1]: j * s[1] + k[1]]
                win = win.reshape(lead + (-1,))
                out[..., i, j] = np.max(win, -1) if kind == "max" else np.nanmean(win, -1)
        return out.astype(x.dtype)
    return f


def _conv_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype, "unit")  # noqa: E731
    return [(A((1, 2, n, n)), A((3, 2, 3, 3)), None, 1, 0, 1, 1),
            (A((2, 3, n, 6)), A((4, 3, 3, 2)), A((4,)), 1, (1, 0), 1, 1),
            (A((1, 2, n + 4, 9)), A((3, 2, 3, 3)), A((3,)), 2, 1, 1, 1),
            (A((1, 4, n, n)), A((4, 1, 3, 3)), None, 1, 1, 1, 4),
            (A((1, 2, n, 8)), A((2, 2, 2, 3)), None, (1, 2), (0, 2), (2, 1), 1),
            (A((1, 3, n, n)), A((2, 4, 1, 1)), None, 1, 0, 1, 1)]  # channel mismatch: raises


def _pool_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype)  # noqa: E731
    return [(A((2, 3, n + 1, 6)), 2, 2, 0), (A((1, 1, n + 2, 5)), 3, (2, 1), 1),
            (A((2, n, 5)), (3, 2), (1, 2), (1, 0)), (A((1, 2, 4, n)), 1, 1, 0)]


def _softmax_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "normal", lay)  # noqa: E731
    big = A((n, 3)) * 30
    return [(A((n, 3)), -1), (A((n, 3), "t"), 0), (A((2, n, 3)), 1), (A((n,), "r"), 0),
            (big, -1), (A((0, 3)), 1)]


def _np_softmax(np_, x, axis):
    e = np.exp(x.astype(np.float64) - np.max(x, axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _np_log_softmax(np_, x, axis):
    x64 = x.astype(np.float64)
    m = np.max(x64, axis=axis, keepdims=True) if x.size else 0
    return (x64 - m - np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True))).astype(x.dtype)


def _conv(ns):
    return lambda xp, x, w, b, s, p, d, g: ns(xp).conv2d(x, w, b, stride=s, padding=p,
                                                        dilation=d, groups=g)


def _pool(ns, name):
    return lambda xp, x, k, s, p: getattr(ns(xp), name)(x, k, stride=s, padding=p)


_top = lambda xp: xp  # noqa: E731
_nn = lambda xp: xp.nn  # noqa: E731

_STATIC = {"jit": "conv2d/max_pool2d/avg_pool2d need static spatial dims and channels: jit "
                  "falls back to per-shape tracing"}
ROWS = []
for _pre, _ns in (("", _top), ("nn.", _nn)):
    ROWS += [
        Row(_pre + "conv2d", _conv(_ns), _conv_cases, np_fn=np_conv2d, dtypes=FLOATS,
            rtol=1e-4, atol=1e-4, xfail=_STATIC),
        Row(_pre + "max_pool2d", _pool(_ns, "max_pool2d"), _pool_cases, np_fn=np_pool("max"),
            dtypes=FLOATS + ("int32", "uint8"), xfail=_STATIC),
        Row(_pre + "avg_pool2d", _pool(_ns, "avg_pool2d"), _pool_cases, np_fn=np_pool("avg"),
            dtypes=FLOATS, rtol=1e-5, xfail=_STATIC),
        Row(_pre + "softmax", (lambda ns: lambda xp, x, ax: ns(xp).softmax(x, axis=ax))(_ns),
            _softmax_cases, np_fn=_np_softmax, dtypes=FLOATS, rtol=1e-5, atol=1e-6),
        Row(_pre + "log_softmax",
            (lambda ns: lambda xp, x, ax: ns(xp).log_softmax(x, axis=ax))(_ns),
            _softmax_cases, np_fn=_np_log_softmax, dtypes=FLOATS, rtol=1e-5, atol=1e-5),
    ]
