"""Host loops (frit.loop outside kernels): the body is recorded while Python runs it once, then
rebuilt between frit_host_loop_begin/end with the carried Arrays replaced by their CARRY
placeholders. Part of frit._control (shared state and helpers live there)."""
import ctypes as C

from . import _array as A
from . import _dtypes as D
from . import _control as K
from . import _session as S
from ._control import (_chain, _status, _check, _is_int, _const, _is_const, _const_tensor,
                      _new_node, _wrap, _const_sig, _expr_sig, Var, rebind, _CACHE_MAX, _RECIPES,
                      _innermost_loop, _restore, _loop_ids, _p, fn, _ptrs)
from ._errors import FritError, FritTypeError


class _HostLoopCtx:
    def __init__(self, start, end, step):
        self.args = [_loop_bound(v) for v in (start, end, step)]

    def __enter__(self):
        K._T.last_if = None
        sc = _HostLoop(S.current(), *self.args)
        self.sc = sc
        sc.prev_rec = A._S.rec
        K._T.host.append(sc)
        A._S.rec = sc
        return _wrap(sc.i_node)

    def __exit__(self, et, ev, tb):
        K._T.last_if = None
        sc = self.sc
        K._T.host.pop()
        A._S.rec = sc.prev_rec
        if et is not None:
            sc.open = False
            _restore(sc.log)
            return False
        sc.finish()
        return False


def _loop_bound(v):
    if isinstance(v, Var):
        v = v._value()
    if isinstance(v, A.Array):
        if v.ndim != 0 or v.dtype.kind not in "iu":
            raise FritError("frit.loop: start, end and step are integer scalars, got a %s array "
                            "of shape %s" % (v.dtype, v.shape))
        return v._n
    if _is_int(v):
        return _const(int(v), D.int64)
    raise FritTypeError("frit.loop: start, end and step are ints or 0-d integer arrays, got %r"
                        % (v,))


class _HostLoop(K._Recipe):
    """A host loop: records its body's nodes, then builds LOOP with the carried Arrays."""
    kernel = False

    def __init__(self, sess, start, end, step):
        self.sess = sess
        self.open = True
        self.body = []
        self.body_set = set()
        self.log = {}
        self.skip = None
        self.stop = None
        self.bounds = (start, end, step)
        self.cache = {}
        lo, hi = -(2 ** 62), 2 ** 62
        if all(_is_const(n) for n in self.bounds):
            a, b = int(start.scalar), int(end.scalar)
            lo, hi = min(a, b), max(a, b)
        name = "_frit_loop%d" % next(_loop_ids)
        u = sess.check(fn["frit_var"](sess.ptr, name.encode(), lo, hi), "frit.loop")
        t = sess.check(fn["frit_tensor_of"](sess.ptr, u), "frit.loop")
        # the index of the recording pass: replaced by the loop's own index when built
        self.i_node = _new_node(sess, t, None, D.int64, (), True, self)

    def record(self, n):
        self.body.append(n)
        self.body_set.add(n)

    def value_error(self):
        return FritTypeError(
            "a value computed in a frit.loop body changes from iteration to iteration: Python "
            "cannot read it while the loop is built (bool/int/float/printing); use frit.if_ and "
            "frit.where, or read the arrays the loop updates after it")

    def closed_error(self):
        return FritError("a value computed inside a frit.loop body is only valid in that body; "
                         "to keep it, write it into an array or frit.var made before the loop "
                         "(a[...] = value, v.set(value))")

    def finish(self):
        bs = self.body_set
        carried = []
        for arr, old in self.log.values():
            if old in bs or old is self.i_node or arr._n is old:
                continue
            carried.append((arr, old))
        outer = _innermost_loop()
        if outer is not None:
            outer.body_set |= bs
            outer.body_set.add(self.i_node)
        if not carried:
            self.open = False
            return
        inits = [old for _, old in carried]
        if len(set(inits)) != len(inits):
            raise FritError("frit.loop: two arrays updated in the loop share one value; make one "
                            "of them a .copy() before the loop")
        self.inits = inits
        self.nexts = [arr._n for arr, _ in carried]
        stop = self.stop._n if self.stop is not None else None
        self.stop_node = stop
        # inputs of the recipe: values from outside the body, in first-use order
        ext, ext_list = set(), []

        def use(n):  # concrete values made in the body (frit.zeros(...)) are inputs too
            if n is self.i_node or _is_const(n) or n in ext or (n.np is None and n in bs):
                return
            ext.add(n)
            ext_list.append(n)

        for n in self.bounds:
            use(n)
        for n in inits:
            use(n)
        for b in self.body:
            if b.np is None:
                for o in b.expr[1]:
                    use(o)
        for n in self.nexts:
            use(n)
        if stop is not None:
            use(stop)
        self.ext_list = ext_list
        sess = self.sess
        ts = []
        for n in ext_list:
            if n.np is None and n.sess is not sess:
                S.realize_nodes([n])
            ts.append(A._tensor_of(n, sess))
        self.open = False
        recipe = self
        try:
            key = self.sig()
            recipe = _RECIPES.get(key)
            if recipe is None:
                if len(_RECIPES) >= _CACHE_MAX * 4:
                    _RECIPES.clear()
                recipe = _RECIPES[key] = self
        except TypeError:  # an unhashable parameter: no sharing
            recipe = self
        results = recipe.build(sess.ptr, ts)
        abstract = any(n.abstract for n in ext_list)
        nodes = []
        for j, (arr, old) in enumerate(carried):
            nodes.append(_new_node(sess, results[j], (_b_loop_out, ext_list, (recipe, j)),
                                   old.dtype, old.shape, abstract))
        _chain(nodes, ext_list, sess)
        for arr, old in carried:
            arr._n = old
        for (arr, old), node in zip(carried, nodes):
            rebind(arr, node)

    def sig(self):
        s = getattr(self, "_sig", None)
        if s is not None:
            return s
        bidx = {n: j for j, n in enumerate(self.body)}
        eidx = {n: j for j, n in enumerate(self.ext_list)}

        def ref(n):
            if n is self.i_node:
                return ("i",)
            if _is_const(n):
                return _const_sig(n)
            j = bidx.get(n)
            if j is not None and n.np is None:
                return ("b", j)
            return ("e", eidx[n])

        body = tuple(_const_sig(b) if _is_const(b) else ("L", eidx[b]) if b.np is not None
                     else _expr_sig(b, ref) for b in self.body)
        s = self._sig = ("loop", len(self.ext_list), tuple(ref(n) for n in self.bounds),
                         tuple(ref(n) for n in self.inits), tuple(ref(n) for n in self.nexts),
                         None if self.stop_node is None else ref(self.stop_node), body)
        return s

    def _replay(self, ctx, ts):
        ext = dict(zip(self.ext_list, ts))
        memo = {}

        def T(n):
            t = memo.get(n)
            if t is not None:
                return t
            if _is_const(n):
                t = memo[n] = _const_tensor(ctx, n)
                return t
            t = ext.get(n)
            if t is None:
                raise FritError("frit.loop: a value from another loop body is used here; values "
                                "computed in a loop body are only valid in that body")
            return t

        k = len(self.inits)
        inits = [T(n) for n in self.inits]
        a, b, s = [T(n) for n in self.bounds]
        index = _p()
        carry = (_p * k)()
        _status(ctx, fn["frit_host_loop_begin"](ctx, a, b, s, k, _ptrs(inits), C.byref(index),
                                                carry), "frit.loop")
        memo[self.i_node] = index.value
        for j, n in enumerate(self.inits):
            memo[n] = carry[j]
        try:
            for n in self.body:
                if n.np is not None:
                    continue
                build, ops, params = n.expr
                memo[n] = _check(ctx, build(ctx, [T(o) for o in ops], *params), "frit.loop")
            nexts = [T(n) for n in self.nexts]
            stop = T(self.stop_node) if self.stop_node is not None else None
        except Exception:
            msg = (fn["frit_error"](ctx) or b"").decode(errors="replace")
            res = (_p * k)()
            fn["frit_host_loop_end"](ctx, carry, None, res)
            fn["frit_clear_error"](ctx)
            if msg:
                raise FritError("frit.loop (building the body): %s" % msg)
            raise
        res = (_p * k)()
        _status(ctx, fn["frit_host_loop_end"](ctx, _ptrs(nexts), stop, res), "frit.loop")
        return [res[j] for j in range(k)]


def _b_loop_out(ctx, ts, recipe, j):
    return recipe.build(ctx, ts)[j]
