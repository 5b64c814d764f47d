"""frit.grad, value_and_grad, vjp, jvp and stop_gradient: reverse-mode autodiff of frit functions.

The function is traced as frit.jit traces it (so its whole graph is known, never cut by eager
realisation), the C library's frit_vjp adds the gradient graph to the trace, and the forward and
backward passes compile to one program, cached per signature like any jitted function. Called
while tracing (inside frit.jit or another grad), they trace through. See docs/autodiff.md.
"""
import ctypes as C
import functools
import threading

import numpy as np

from . import _array as A
from . import _lib as L
from ._errors import FritError, FritTypeError
from ._jit import jit, _flatten, _unflatten
from ._shape_ops import zeros_like

_p = C.c_void_p
_vjp = L.fn["frit_vjp"]
_stop = L.fn["frit_stop_gradient"]
_set_vjp = L.fn["frit_set_vjp"]
# frit_vjp_rule: (ctx, params, out, g, nin, ins, grads) -> status
_RULE = C.CFUNCTYPE(C.c_int, _p, C.POINTER(C.c_int64), _p, _p, C.c_int, C.POINTER(_p), C.POINTER(_p))
_Array = A.Array


class _Pending(threading.local):
    error = None  # an exception of a custom_vjp rule, raised once frit_vjp has returned
    # the gradients of the last frit_vjp call, by its arguments: the n gradients of one call
    # are n nodes, and a host loop's reverse pass is not hash-consed (each frit_vjp call would
    # build a new one), so they share one call
    last = None


_pending = _Pending()


def _b_vjp(ctx, ts, i, nwrt, has_seed, loop_checkpoint=0):
    """Gradient i of ts[0] (seeded by ts[1] when has_seed) with respect to the last nwrt tensors."""
    key = (ctx, tuple(ts), nwrt, has_seed, loop_checkpoint)
    last = _pending.last
    if last is not None and last[0] == key and i in last[2]:
        last[2].discard(i)
        if not last[2]:  # every gradient taken: a later context may reuse these addresses
            _pending.last = None
        return last[1][i]
    wrt = (_p * nwrt)(*ts[len(ts) - nwrt:])
    grads = (_p * nwrt)()
    _pending.error = None
    L.fn["frit_set_loop_checkpoint"](ctx, loop_checkpoint)
    try:
        st = _vjp(ctx, ts[0], ts[1] if has_seed else None, nwrt, wrt, grads)
    finally:
        L.fn["frit_set_loop_checkpoint"](ctx, 0)
    if st != 0:
        e, _pending.error = _pending.error, None
        if e is not None:
            L.fn["frit_clear_error"](ctx)
            raise e
        return None
    rest = set(range(nwrt)) - {i}
    _pending.last = (key, list(grads), rest) if rest else None
    return grads[i]


def _b_identity(ctx, ts):
    return L.fn["frit_identity"](ctx, ts[0])


def _refuse_rule(name):
    def rule(ctx, params, t_out, t_g, nin, ins, grads):
        _pending.error = FritError(
            "custom_vjp %s inside a frit.loop body: its rule is not carried into the loop's gradient "
            "yet (call it outside the loop, or differentiate the function without the rule)" % name)
        return 2

    return _RULE(rule)


_REFUSERS = {}


def _b_refuse(ctx, ts, name):
    """x as a node of its own whose gradient rule raises (custom_vjp inside frit.loop)."""
    t = L.fn["frit_identity"](ctx, ts[0])
    cb = _REFUSERS.get(name)
    if cb is None:
        cb = _REFUSERS[name] = _refuse_rule(name)
    if not t or _set_vjp(ctx, t, 1, (_p * 1)(ts[0]), C.cast(cb, _p), None, 0) != 0:
        return None
    return t


def _b_stop(ctx, ts):
    return _stop(ctx, ts[0])


def stop_gradient(x):
    """x's value, with no gradient flowing through it (an identity once compiled)."""
    x = x if isinstance(x, _Array) else A.asarray(x)
    return A.apply(_b_stop, [x])


def _describe(a):
    return "shape %s %s" % (tuple(a.shape), a.dtype)


def _argnums(argnums, nargs, who):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise FritTypeError("%s: argnums is empty" % who)
    for k in nums:
        if not isinstance(k, int) or not -nargs <= k < nargs:
            raise FritTypeError("%s: argnums %r out of range for a call with %d positional "
                                "arguments" % (who, k, nargs))
    return single, tuple(k % nargs for k in nums)


def _float_leaves(x, who, what, complex_ok=False):
    """The array leaves of a pytree (a treedef to rebuild it); every leaf a float array (or a
    complex one where complex_ok: its gradient is dL/dRe + i dL/dIm, PyTorch's convention)."""
    leaves = []
    tree = _flatten(x, leaves)
    for j, a in enumerate(leaves):
        if not isinstance(a, _Array):
            a = leaves[j] = A.asarray(a)
        if a.dtype.kind != "f" and not (complex_ok and a.dtype.kind == "c"):
            raise FritTypeError("%s: %s has %s; gradients are defined for %s arrays "
                                "(convert with astype)" % (who, what, _describe(a),
                                                           "float or complex" if complex_ok else "real float"))
    return tree, leaves


def _as_float_arg(x):
    """Python floats become float64 0-d arrays, so that they can be differentiated."""
    return np.asarray(x, np.float64) if type(x) is float else x


def _vjp_of(out, seed, leaves, loop_checkpoint=0):
    """The gradients of sum(out * seed) (seed None: out is 0-d) with respect to leaves."""
    ops = [out] + ([seed] if seed is not None else []) + leaves
    n = len(leaves)
    return [A.apply(_b_vjp, ops, (i, n, seed is not None, _checkpoint(loop_checkpoint)))
            for i in range(n)]


def _checkpoint(n):
    if n is None:
        return 0
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise FritTypeError("loop_checkpoint: an int >= 1 (store the carried values of every n-th "
                            "frit.loop iteration) or 0/None (default), got %r" % (n,))
    return n


def _check_scalar(out, who):
    if not isinstance(out, _Array):
        try:
            out = A.asarray(out)
        except Exception:
            raise FritTypeError("%s: the function must return a scalar float array, got %s"
                                % (who, type(out).__name__)) from None
    if out.ndim != 0 or out.dtype.kind != "f":
        raise FritTypeError("%s: the function must return a scalar (0-d) real float array, got %s"
                            % (who, _describe(out)))
    return out


def _grad_trace(fun, argnums, has_aux, with_value, who, loop_checkpoint, args, kwargs):
    single, nums = _argnums(argnums, len(args), who)
    per_arg = [_float_leaves(args[k], who, "argument %d" % k, complex_ok=True) for k in nums]
    args = list(args)
    for k, (tree, leaves) in zip(nums, per_arg):
        args[k] = _unflatten(tree, iter(leaves))
    res = fun(*args, **kwargs)
    if has_aux:
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise FritTypeError("%s: has_aux=True needs the function to return a pair (output, aux)"
                                % who)
        res, aux = res
    out = _check_scalar(res, who)
    flat = [a for _, leaves in per_arg for a in leaves]
    g = iter(_vjp_of(out, None, flat, loop_checkpoint))
    grads = tuple(_unflatten(tree, g) for tree, _ in per_arg)
    grads = grads[0] if single else grads
    if with_value:
        return ((out, aux) if has_aux else out), grads
    return (grads, aux) if has_aux else grads


def _differentiable(fun, argnums, has_aux, with_value, who, loop_checkpoint=None):
    _checkpoint(loop_checkpoint)
    traced = jit(lambda *a, **k: _grad_trace(fun, argnums, has_aux, with_value, who,
                                             loop_checkpoint, a, k))

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        _, nums = _argnums(argnums, len(args), who)
        args = tuple(_as_float_arg(a) if i in nums else a for i, a in enumerate(args))
        return traced(*args, **kwargs)

    wrapper.jitted = traced
    return wrapper


def grad(fun, argnums=0, has_aux=False, loop_checkpoint=None):
    """The gradient of fun (which returns a 0-d float array) with respect to positional
    argument(s) argnums, each a float array or a pytree of them: a function of the same arguments
    returning gradients of the same structure (a tuple when argnums is a tuple). has_aux: fun
    returns (output, aux) and the function returns (gradients, aux). loop_checkpoint: through a
    frit.loop, store the carried values of every n-th iteration and recompute the others in the
    reverse pass (1: store all; None/0: $FRIT_LOOP_CHECKPOINT, else ceil(sqrt(trips)))."""
    return _differentiable(fun, argnums, has_aux, False, "grad", loop_checkpoint)


def value_and_grad(fun, argnums=0, has_aux=False, loop_checkpoint=None):
    """Like grad, returning (fun's output, gradients); with has_aux ((output, aux), gradients).
    Forward and backward pass are one compiled program."""
    return _differentiable(fun, argnums, has_aux, True, "value_and_grad", loop_checkpoint)


def _vjp_trace(fun, has_aux, primals, cotangent, loop_checkpoint=None):
    trees = [_float_leaves(p, "vjp", "primal %d" % i) for i, p in enumerate(primals)]
    args = [_unflatten(t, iter(ls)) for t, ls in trees]
    res = fun(*args)
    if has_aux:
        res = res[0]
    outs, cts = [], []
    tree_o = _flatten(res, outs)
    tree_c = _flatten(cotangent, cts)
    if tree_o != tree_c or len(outs) != len(cts):
        raise FritTypeError("vjp: the cotangent's structure does not match the output's")
    flat = [a for _, ls in trees for a in ls]
    total = None
    for o, c in zip(outs, cts):
        o = o if isinstance(o, _Array) else A.asarray(o)
        c = c if isinstance(c, _Array) else A.asarray(c)
        if o.dtype.kind != "f":
            raise FritTypeError("vjp: output has %s; gradients are defined for real float arrays"
                                % _describe(o))
        if c.shape != o.shape and None not in c.shape + o.shape:
            raise FritTypeError("vjp: cotangent of %s for an output of %s" % (_describe(c), _describe(o)))
        gs = _vjp_of(o, c, flat, loop_checkpoint)
        total = gs if total is None else [a + b for a, b in zip(total, gs)]
    it = iter(total)
    return tuple(_unflatten(t, it) for t, _ in trees)


def vjp(fun, *primals, has_aux=False, loop_checkpoint=None):
    """(fun(*primals), vjp_fn[, aux]): vjp_fn(cotangent) returns the gradients of
    sum(output * cotangent) with respect to each primal, as a tuple. vjp_fn runs forward and
    backward again as one compiled program (frit keeps no residuals between calls).
    loop_checkpoint: as for grad (frit.loop)."""
    _checkpoint(loop_checkpoint)
    primals = tuple(_as_float_arg(p) for p in primals)
    res = jit(fun)(*primals)
    out, aux = (res[0], res[1]) if has_aux else (res, None)
    back = jit(lambda ps, ct: _vjp_trace(fun, has_aux, ps, ct, loop_checkpoint))

    def vjp_fn(cotangent):
        return back(primals, cotangent)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _jvp_trace(fun, primals, tangents, u):
    trees = [_float_leaves(p, "jvp", "primal %d" % i) for i, p in enumerate(primals)]
    flat = [a for _, ls in trees for a in ls]
    tans = []
    tree_t = tuple(_flatten(t, tans) for t in tangents)
    if tree_t != tuple(t for t, _ in trees):
        raise FritTypeError("jvp: the tangents' structure does not match the primals'")
    out = fun(*[_unflatten(t, iter(ls)) for t, ls in trees])
    if not isinstance(out, _Array) or out.dtype.kind != "f":
        raise FritTypeError("jvp: the function must return one real float array")
    # J v as the transpose of the (linear) vjp: the gradient with respect to u of <vjp(u), v>
    back = _vjp_of(out, u, flat)
    total = None
    for b, t in zip(back, tans):
        t = t if isinstance(t, _Array) else A.asarray(t)
        if b.dtype.kind != "f" or (b.shape != t.shape and None not in b.shape + t.shape):
            raise FritTypeError("jvp: tangent of %s for a primal of %s" % (_describe(t), _describe(b)))
        (g,) = _vjp_of(b, t.astype(b.dtype), [u])
        total = g if total is None else total + g
    return total


def jvp(fun, primals, tangents):
    """(fun(*primals), J tangents): the forward-mode derivative of a function returning one float
    array, in the direction tangents (same structure as primals). Computed as the transpose of
    the reverse-mode product, so it costs a forward and a backward pass."""
    primals = tuple(_as_float_arg(p) for p in primals)
    tangents = tuple(_as_float_arg(t) for t in tangents)
    if len(primals) != len(tangents):
        raise FritTypeError("jvp: %d primals but %d tangents" % (len(primals), len(tangents)))
    out = jit(fun)(*primals)
    if not isinstance(out, _Array) or out.dtype.kind != "f":
        raise FritTypeError("jvp: the function must return one real float array")
    u = np.zeros(out.shape, out.dtype.storage) if out._n.np is not None or not out._n.abstract \
        else None
    if u is None:  # called while tracing: the placeholder is a node of its own in the traced graph
        u = A.apply(_b_identity, [zeros_like(out)])
        return out, _jvp_trace(fun, primals, tangents, u)
    tan = jit(_jvp_trace, static_argnums=(0,))(fun, primals, tangents, u)
    return out, tan


class custom_vjp:
    """A function with a user gradient, as jax.custom_vjp:

        @frit.custom_vjp
        def f(x, y): ...
        def f_fwd(x, y): return f(x, y), residuals      # residuals: any pytree of arrays
        def f_bwd(residuals, g): return (gx, gy)         # one cotangent per argument (None: zero)
        f.defvjp(f_fwd, f_bwd)

    The arguments are arrays (float ones are differentiable); f returns one array. Outside a
    gradient f runs as written; under frit.grad (or inside frit.jit) the forward value comes from
    f_fwd and frit_vjp calls f_bwd instead of differentiating f's graph (frit_set_vjp)."""

    def __init__(self, fun):
        self.fun, self.fwd, self.bwd = fun, None, None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise FritTypeError("custom_vjp %s: call defvjp(fwd, bwd) first" % getattr(self.fun, "__name__", "f"))
        args = [a if isinstance(a, _Array) else A.asarray(a) for a in args]
        out, res = self.fwd(*args)
        out = out if isinstance(out, _Array) else A.asarray(out)
        n = out._n
        if n.np is not None or not n.abstract:  # eager: no gradient will be taken of it
            return out
        sess = n.sess
        bwd = self.bwd
        from ._control import _innermost_loop
        if _innermost_loop() is not None:
            # a frit.loop body is recorded, then built again: a rule attached here would stay with
            # the recording, and its residuals are values of that one pass. Refused when
            # differentiated (the build attaches a refusing rule), never a silently other gradient.
            return A.apply(_b_refuse, [out], (getattr(self.fun, "__name__", "f"),))
        out = A.apply(_b_identity, [out])  # a node of its own, even when f returns an argument

        def rule(ctx, params, t_out, t_g, nin, ins, grads):
            try:
                g = _Array._lazy(sess, t_g)
                gs = bwd(res, g)
                gs = gs if isinstance(gs, (tuple, list)) else (gs,)
                if len(gs) != nin:
                    raise FritTypeError("custom_vjp: bwd returned %d cotangents for %d arguments" % (len(gs), nin))
                for i, (gi, a) in enumerate(zip(gs, args)):
                    if gi is None:
                        grads[i] = None
                        continue
                    gi = gi if isinstance(gi, _Array) else A.asarray(gi)
                    if a.dtype.kind == "f" and gi.dtype != a.dtype:
                        gi = gi.astype(a.dtype)
                    grads[i] = gi._tensor(sess)
                return 0
            except Exception as e:  # noqa: BLE001 - raised again by _b_vjp when frit_vjp returns
                _pending.error = e
                return 2

        cb = _RULE(rule)
        keep = getattr(sess, "custom_rules", None)
        if keep is None:
            keep = sess.custom_rules = []
        keep.append((cb, res, args))  # alive as long as the session's graph
        ins = (_p * len(args))(*[a._tensor(sess) for a in args])
        if _set_vjp(sess.ptr, out._tensor(sess), len(args), ins, C.cast(cb, _p), None, 0) != 0:
            raise sess.error()
        return out
