"""frit.random: seeded, reproducible random arrays on frit's counter-based generator
(Philox-4x32-10 in C: element i of a draw is a pure function of (key, i), the same on every
backend and for every schedule).

State: a Generator holds a 64-bit seed and a count of its draws; draw k uses the key
splitmix64(seed + (k + 1) * golden), so successive draws differ and the same seed with the same
sequence of calls gives the same arrays. The module functions (uniform, normal, integers, random)
use a global Generator that frit.random.seed(s) replaces (unseeded: seeded from os.urandom);
default_rng(s) makes an independent one. seed(s) then uniform(...) equals
default_rng(s).uniform(...).

Defaults differ from numpy in one respect: floats are float32 unless dtype= says otherwise.
Results are lazy frit arrays. Inside frit.jit a draw is traced once: the compiled function
returns the same numbers on every call (pass a seed argument, static, to vary them).
"""
import itertools
import os

import numpy as np

from . import _array as A
from . import _dtypes as D
from . import _lib as L
from ._errors import FritError, FritTypeError

__all__ = ["Generator", "default_rng", "seed", "uniform", "normal", "integers", "random",
           "standard_normal"]

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _splitmix64(z):
    z = (z + _GOLDEN) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _size(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    try:
        size = tuple(int(s) for s in size)
    except TypeError:
        raise FritTypeError("size must be None, an int or a sequence of ints") from None
    if any(s < 0 for s in size):
        raise FritError("negative dimensions are not allowed (size %s)" % (size,))
    return size


def _b_uniform(ctx, ts, key, code, n, dims, lo, hi):
    return L.fn["frit_rand_uniform"](ctx, key, code, n, dims, lo, hi)


def _b_normal(ctx, ts, key, code, n, dims, mean, std):
    return L.fn["frit_rand_normal"](ctx, key, code, n, dims, mean, std)


def _b_int(ctx, ts, key, code, n, dims, lo, hi):
    return L.fn["frit_rand_int"](ctx, key, code, n, dims, lo, hi)


def _is_scalar(v):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) or \
        (isinstance(v, (np.ndarray, A.Array)) and v.ndim == 0 and not isinstance(v, bool))


def _scalar(v):
    return float(v.item() if isinstance(v, (np.ndarray, np.generic)) else float(v))


class Generator:
    """A reproducible stream of random arrays (numpy.random.Generator-like methods)."""

    def __init__(self, seed=None):
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        if isinstance(seed, Generator):
            seed = seed._seed
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise FritTypeError("seed must be an integer, got %s" % type(seed).__name__) from None
        if seed < 0:
            raise FritError("seed must be non-negative")
        self._seed = seed & _M64
        self._count = 0
        self._counter = itertools.count(1)  # next() is atomic: threads never share a key

    def __repr__(self):
        return "frit.random.Generator(seed=%d, draws=%d)" % (self._seed, self._count)

    def _key(self):
        c = self._count = next(self._counter)
        return _splitmix64((self._seed + c * _GOLDEN) & _M64)

    def _draw(self, build, dt, size, a, b):
        shape = _size(size)
        return A.apply(build, [], (self._key(), dt.code, len(shape), L._i64arr(shape), a, b))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=D.float32):
        """Floats in [low, high) (rounding may reach high for 16-bit dtypes). low/high may be
        arrays: then size defaults to their broadcast shape."""
        dt = D.dtype(dtype)
        if dt.kind != "f":
            raise FritTypeError("uniform: dtype must be a float dtype, got %s" % dt.name)
        if _is_scalar(low) and _is_scalar(high):
            return self._draw(_b_uniform, dt, size, _scalar(low), _scalar(high))
        from . import _ops as O
        lo, hi = A.operand(low), A.operand(high)
        if size is None:
            size = np.broadcast_shapes(lo.shape, hi.shape)
        u = self._draw(_b_uniform, dt, size, 0.0, 1.0)
        return O.astype(lo + (hi - lo) * u, dt)

    def random(self, size=None, dtype=D.float32):
        """Floats in [0, 1)."""
        return self.uniform(0.0, 1.0, size, dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=D.float32):
        """Normal(loc, scale) floats. loc/scale may be arrays (size defaults to their shape)."""
        dt = D.dtype(dtype)
        if dt.kind != "f":
            raise FritTypeError("normal: dtype must be a float dtype, got %s" % dt.name)
        if _is_scalar(loc) and _is_scalar(scale):
            if _scalar(scale) < 0:
                raise FritError("normal: scale < 0")
            return self._draw(_b_normal, dt, size, _scalar(loc), _scalar(scale))
        from . import _ops as O
        mu, sd = A.operand(loc), A.operand(scale)
        if size is None:
            size = np.broadcast_shapes(mu.shape, sd.shape)
        z = self._draw(_b_normal, dt, size, 0.0, 1.0)
        return O.astype(mu + sd * z, dt)

    def standard_normal(self, size=None, dtype=D.float32):
        return self.normal(0.0, 1.0, size, dtype)

    def integers(self, low, high=None, size=None, dtype=D.int64, endpoint=False):
        """Integers in [low, high) ([low, high] with endpoint=True); high None: [0, low)."""
        dt = D.dtype(dtype)
        if dt.kind not in "iu":
            raise FritTypeError("integers: dtype must be an integer dtype, got %s" % dt.name)
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high)
        if endpoint:
            high += 1
        if low >= high:
            raise FritError("integers: low >= high (%d, %d)" % (low, high - int(bool(endpoint))))
        info = np.iinfo(dt.value)
        if low < info.min or high - 1 > info.max:
            raise FritError("integers: bounds [%d, %d) out of range for %s" % (low, high, dt.name))
        if high > 2 ** 63 - 1:  # the C draw takes int64 bounds: shift into range
            from . import _ops as O
            r = self._draw(_b_int, D.int64, size, 0, high - low) if high - low <= 2 ** 63 - 1 else None
            if r is None:
                raise FritError("integers: range wider than 2**63 is not supported")
            return O.astype(r, dt) + np.asarray(low, dt.value)
        return self._draw(_b_int, dt, size, low, high)


_global = Generator()


def default_rng(seed=None):
    """A new Generator seeded with `seed` (None: from os.urandom)."""
    return Generator(seed)


def seed(s=None):
    """Reseeds the global generator used by the module functions."""
    global _global
    _global = Generator(s)


def uniform(low=0.0, high=1.0, size=None, dtype=D.float32):
    return _global.uniform(low, high, size, dtype)


def random(size=None, dtype=D.float32):
    return _global.random(size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=D.float32):
    return _global.normal(loc, scale, size, dtype)


def standard_normal(size=None, dtype=D.float32):
    return _global.standard_normal(size, dtype)


def integers(low, high=None, size=None, dtype=D.int64, endpoint=False):
    return _global.integers(low, high, size, dtype, endpoint)


for _f in (uniform, random, normal, standard_normal, integers):
    _f.__doc__ = getattr(Generator, _f.__name__).__doc__
