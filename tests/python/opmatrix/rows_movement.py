"""Op-matrix rows of the shape and movement functions: reshape, transposes, broadcasting,
squeeze/expand_dims, concatenation and stacking, pad, flip, roll, repeat, tile, contiguous."""
import numpy as np

from .spec import Row, REAL, array

RESHAPE_SYM = {"jit": "reshape(-1)/ravel of symbolic dims fails ('-1 needs a static shape; use "
                      "reshape_sym'): jit falls back to per-shape tracing"}
PY_SHAPES = {"jit": "Python-level shape arithmetic on symbolic dims (int(None), 'shape: got "
                    "None'): jit falls back to per-shape tracing"}

ALL = REAL


def _one(f):
    """cases(rng, n, dtype) of one array argument per shape in f(n) -> [(shape, extra args)]."""
    def cases(rng, n, dtype):
        out = []
        for k, (shape, extra) in enumerate(f(n)):
            lay = "ctsr"[k % 4] if len(shape) >= 1 else "c"
            out.append((array(rng, shape, dtype, "normal", lay),) + tuple(extra))
        return out
    return cases


def _reshape_shapes(n):
    return [((n, 6), ((6, n),)), ((), ((1, 1),)), ((0, 3), ((3, 0),)), ((0, 3), ((-1, 3),)),
            ((n, 1, 4), ((4, n),)), ((n,), ((n,),)),
            ((2, n), ((n, 3),))]  # the last: numpy refuses (2n elements into 3n)


def _reshape_minus1(n):
    return [((n, 6), ((-1,),)), ((n, 6), ((2, -1, 3),)), ((n, 6), ((-1, n),))]


def _axes_shapes(n):
    return [((n, 3, 2), ((2, 0, 1),)), ((n, 3), ((1, 0),)), ((n, 3, 2), ((-1, 0, 1),)),
            ((), ((),)), ((0, n), ((1, 0),)), ((n, 3), ((0, 0),))]


def _swap_shapes(n):
    return [((n, 3, 2), (0, 2)), ((n, 3), (-1, 0)), ((n,), (0, 0)), ((0, 3), (0, 1)),
            ((n, 3), (0, 2))]


def _move_shapes(n):
    return [((n, 3, 2), (0, -1)), ((n, 3, 2), ((0, 1), (2, 0))), ((n, 3), (1, 0)),
            ((n, 3), (2, 0))]


def _expand_shapes(n):
    # axis n (== ndim) and -ndim-1 are valid (numpy and the array API)
    return [((n, 3), (0,)), ((n, 3), (2,)), ((n, 3), (-1,)), ((n, 3), (-3,)), ((), (0,)),
            ((n, 3), (3,)), ((n, 3), (-4,)), ((n, 3), ((0, 3),)), ((0,), (1,))]


def _squeeze_shapes(n):
    return [((n, 1, 3), (1,)), ((1, n, 1), (None,)), ((1, n, 1), ((0, -1),)), ((1,), (0,)),
            ((n, 3), (0,)), ((1, 0, 1), (None,)), ((), (None,))]


def _bcast_shapes(n):
    return [((n, 1), ((n, 4),)), ((3,), ((n, 2, 3),)), ((), ((n,),)), ((1, 3), ((0, 3),)),
            ((n, 3), ((2, n, 3),)), ((n, 3), ((3, n),)), ((n, 2), ((n, 1),))]


def _flip_shapes(n):
    return [((n, 3), (None,)), ((n, 3), (0,)), ((n, 3, 2), ((0, 2),)), ((n, 3), (-1,)),
            ((), (None,)), ((0, 3), (1,)), ((n, 3), (2,))]


def _roll_shapes(n):
    return [((n, 3), (1, 0)), ((n, 3), (-2, 1)), ((n, 3), (7, None)), ((n, 3, 2), ((1, 2), (0, 2))),
            ((n,), (n + 1, 0)), ((0, 3), (1, 0)), ((n, 3), (0, None)), ((), (1, None))]


def _pad_shapes(mode):
    def f(n):
        out = [((n, 3), (((1, 2), (0, 1)),)), ((n,), ((2,),)), ((n, 3), (((0, 0), (2, 2)),))]
        if mode == "constant":
            out += [((), (((),)),), ((0, 2), (((1, 1), (1, 0)),))]
        if mode == "reflect":
            out += [((n, 3), (((0, 0), (2, 2)),)), ((n, 1), (((1, 1), (0, 0)),))]
        return out
    return f


def _repeat_shapes(n):
    return [((n, 3), (2, 0)), ((n, 3), (3, None)), ((n, 3), (0, 1)), ((), (2, None)),
            ((n, 3), (1, -1)), ((0, 3), (2, 0))]


def _tile_shapes(n):
    return [((n, 3), ((2, 1),)), ((n,), ((2, 2),)), ((), ((2,),)), ((n, 3), ((0, 2),))]


def _tile_inner(n):
    # repeating an inner symbolic axis
    return [((n, 3), (3,)), ((2, n, 3), ((1, 2, 1),))]


def _shapes_only(n):
    return [((n, 3), ()), ((n,), ()), ((), ()), ((0, 3), ()), ((2, n, 3), ())]


ROWS = [
    Row("reshape", lambda xp, a, s: xp.reshape(a, s), _one(_reshape_shapes), dtypes=ALL),
    Row("reshape", lambda xp, a, s: xp.reshape(a, s), _one(_reshape_minus1), dtypes=ALL,
        xfail=RESHAPE_SYM),
    Row("ravel", lambda xp, a: xp.ravel(a), _one(_shapes_only), dtypes=ALL, xfail=RESHAPE_SYM),
    Row("transpose", lambda xp, a: xp.transpose(a), _one(_shapes_only), dtypes=ALL),
    Row("transpose", lambda xp, a, ax: xp.transpose(a, ax), _one(_axes_shapes), dtypes=ALL),
    Row("permute_dims", lambda xp, a, ax: xp.permute_dims(a, ax), _one(_axes_shapes),
        dtypes=ALL),
    Row("matrix_transpose", lambda xp, a: xp.matrix_transpose(a),
        _one(lambda n: [((n, 3), ()), ((2, n, 3), ()), ((0, 3), ()), ((n,), ())]), dtypes=ALL),
    Row("swapaxes", lambda xp, a, i, j: xp.swapaxes(a, i, j), _one(_swap_shapes), dtypes=ALL),
    Row("moveaxis", lambda xp, a, s, d: xp.moveaxis(a, s, d), _one(_move_shapes), dtypes=ALL),
    Row("expand_dims", lambda xp, a, ax: xp.expand_dims(a, axis=ax), _one(_expand_shapes),
        dtypes=ALL),
    Row("squeeze", lambda xp, a, ax: xp.squeeze(a, axis=ax), _one(_squeeze_shapes), dtypes=ALL),
    Row("broadcast_to", lambda xp, a, s: xp.broadcast_to(a, s), _one(_bcast_shapes), dtypes=ALL,
        retrace_ok=True, why="the target shapes name n as a Python int: a symbolic input dim "
        "cannot be proven equal to it, so jit traces per shape"),
    Row("flip", lambda xp, a, ax: xp.flip(a, axis=ax), _one(_flip_shapes), dtypes=ALL),
    Row("flipud", lambda xp, a: xp.flipud(a),
        _one(lambda n: [((n, 3), ()), ((n,), ()), ((0, 2), ()), ((), ())]), dtypes=ALL),
    Row("fliplr", lambda xp, a: xp.fliplr(a),
        _one(lambda n: [((n, 3), ()), ((2, n, 3), ()), ((n,), ())]), dtypes=ALL),
    Row("roll", lambda xp, a, s, ax: xp.roll(a, s, axis=ax), _one(_roll_shapes), dtypes=ALL),
    Row("pad", lambda xp, a, w: xp.pad(a, w), _one(_pad_shapes("constant")), dtypes=ALL),
    Row("pad", lambda xp, a, w: xp.pad(a, w, mode="constant", constant_values=3),
        _one(_pad_shapes("constant")), dtypes=ALL[1:]),
    Row("pad", lambda xp, a, w: xp.pad(a, w, mode="edge"), _one(_pad_shapes("edge")),
        dtypes=ALL),
    Row("pad", lambda xp, a, w: xp.pad(a, w, mode="reflect"), _one(_pad_shapes("reflect")),
        dtypes=ALL, xfail={"jit": "pad reflect of a symbolic dim: 'SHRINK bounds outside the "
                                  "dim'; jit falls back to per-shape tracing"}),
    Row("pad", lambda xp, a, w: xp.pad(a, w, mode="symmetric"), _one(_pad_shapes("edge")),
        dtypes=("int32", "float32")),
    Row("pad", lambda xp, a, w: xp.pad(a, w, mode="wrap"), _one(_pad_shapes("edge")),
        dtypes=("int32", "float32")),
    Row("repeat", lambda xp, a, r, ax: xp.repeat(a, r, axis=ax), _one(_repeat_shapes),
        dtypes=ALL),
    Row("repeat", lambda xp, a, r: xp.repeat(a, r, axis=0),
        lambda rng, n, dt: [(array(rng, (3, 2), dt), np.array([1, 0, 2]))], dtypes=("float32",),
        modes=("eager", "interp"), why="an array of repeats: the output shape depends on values"),
    Row("tile", lambda xp, a, r: xp.tile(a, r), _one(_tile_shapes), dtypes=ALL),
    Row("tile", lambda xp, a, r: xp.tile(a, r), _one(_tile_inner), dtypes=ALL,
        xfail={"jit": "tile/repeat along an inner symbolic axis: 'RESHAPE changes the number "
                      "of elements' (not provable symbolically); jit falls back per shape"}),
    Row("contiguous", lambda xp, a: xp.contiguous(a), _one(_shapes_only), dtypes=ALL,
        np_fn=lambda np, a: np.ascontiguousarray(a) if a.ndim else a.copy()),
    Row("atleast_1d", lambda xp, a: xp.atleast_1d(a), _one(_shapes_only), dtypes=ALL),
    Row("atleast_2d", lambda xp, a: xp.atleast_2d(a), _one(_shapes_only), dtypes=ALL,
        xfail=PY_SHAPES),
]


def _seq_cases(kind):
    """Lists of arrays for concatenate/stack (same dtype; one mixed-dtype list)."""
    def cases(rng, n, dtype):
        A = lambda s, lay="c", dt=dtype: array(rng, s, dt, "normal", lay)  # noqa: E731
        if kind == "concat":
            return [([A((n, 3)), A((2, 3), "t")], 0), ([A((n, 3)), A((n, 1))], -1),
                    ([A((n,))], 0), ([A((0, 3)), A((n, 3), "r")], 0),
                    ([A((n, 3)), A((n, 3), dt="int16")], 1), ([A((n, 3)), A((n, 2))], 0)]
        if kind == "concat_none":
            return [([A((n, 2)), A((n, 2))], None), ([A((3,)), A((n, 2))], None)]
        return [([A((n, 3)), A((n, 3), "t")], 0), ([A((n, 3)), A((n, 3))], -1),
                ([A(()), A(())], 0), ([A((0, 3)), A((0, 3))], 1), ([A((n,)), A((n + 1,))], 0),
                ([A((n, 2)), A((n, 2), dt="uint8")], 2)]
    return cases


def _hv_cases(rng, n, dtype):
    A = lambda s, lay="c": array(rng, s, dtype, "normal", lay)  # noqa: E731
    return [([A((n, 3)), A((n, 2), "t")],), ([A((n,)), A((2,))],), ([A((2, 3)), A((2, 3))],),
            ([A(()), A(())],)]


def _bcast_arrays_cases(rng, n, dtype):
    A = lambda s: array(rng, s, dtype)  # noqa: E731
    return [(A((n, 1)), A((1, 3))), (A(()), A((n,))), (A((0, 1)), A((1, 4))), (A((n,)), A((3,)))]


ROWS += [
    Row("concatenate", lambda xp, xs, ax: xp.concatenate(xs, axis=ax), _seq_cases("concat"),
        dtypes=ALL),
    Row("concat", lambda xp, xs, ax: xp.concat(xs, axis=ax), _seq_cases("concat"), dtypes=ALL),
    Row("concatenate", lambda xp, xs, ax: xp.concatenate(xs, axis=ax), _seq_cases("concat_none"),
        dtypes=ALL, xfail=RESHAPE_SYM),
    Row("stack", lambda xp, xs, ax: xp.stack(xs, axis=ax), _seq_cases("stack"), dtypes=ALL),
    Row("hstack", lambda xp, xs: xp.hstack(xs), _hv_cases, dtypes=ALL),
    Row("vstack", lambda xp, xs: xp.vstack(xs), _hv_cases, dtypes=ALL),
    Row("broadcast_arrays", lambda xp, a, b: xp.broadcast_arrays(a, b), _bcast_arrays_cases,
        dtypes=ALL, xfail=PY_SHAPES),
    Row("broadcast_shapes", lambda xp, a, b: np.array(xp.broadcast_shapes(a, b), np.int64),
        lambda rng, n, dt: [((n, 1), (1, 3)), ((), (n,)), ((0, 1), (1, 4)), ((n,), (3,))],
        dtypes=("int64",), modes=("eager",),
        why="a shape function of Python tuples: no arrays, nothing to trace or interpret"),
]
