"""frit.nn.init: parameter initialisers drawn from frit's counter-based generator (frit.random);
each returns a float32 frit array. rng: a frit.random.Generator (default: the global one)."""
import numpy as np

from .. import random as R

__all__ = ["uniform", "normal", "kaiming_uniform", "kaiming_normal", "xavier_uniform",
           "xavier_normal", "zeros"]


def _gen(rng):
    return rng if rng is not None else R._global  # read now: frit.random.seed() rebinds it


def _fans(shape):
    if len(shape) < 2:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    if len(shape) == 2:  # Linear weights are (in, out) here
        return shape[0], shape[1]
    return shape[1] * receptive, shape[0] * receptive  # conv (out, in, kh, kw)


def _realised(a):
    """A concrete array (parameters are leaves, never lazy graphs)."""
    from .. import _array as A
    return A.asarray(np.asarray(a))


def uniform(shape, low, high, rng=None):
    return _realised(_gen(rng).uniform(low, high, size=tuple(shape)))


def normal(shape, std=1.0, rng=None):
    return _realised(_gen(rng).normal(0.0, std, size=tuple(shape)))


def zeros(shape):
    from .. import _ops as O
    return O.zeros(tuple(shape), dtype="float32")


def kaiming_uniform(shape, gain=np.sqrt(2.0), rng=None):
    fan_in, _ = _fans(shape)
    bound = gain * np.sqrt(3.0 / fan_in)
    return uniform(shape, -bound, bound, rng)


def kaiming_normal(shape, gain=np.sqrt(2.0), rng=None):
    fan_in, _ = _fans(shape)
    return normal(shape, gain / np.sqrt(fan_in), rng)


def xavier_uniform(shape, gain=1.0, rng=None):
    fan_in, fan_out = _fans(shape)
    bound = gain * np.sqrt(6.0 / (fan_in + fan_out))
    return uniform(shape, -bound, bound, rng)


def xavier_normal(shape, gain=1.0, rng=None):
    fan_in, fan_out = _fans(shape)
    return normal(shape, gain * np.sqrt(2.0 / (fan_in + fan_out)), rng)
