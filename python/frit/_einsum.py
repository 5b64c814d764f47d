"""frit.einsum: numpy's subscripts (explicit/implicit output, '...', repeated labels, sublist form)
lowered to frit ops: diagonals as views, single-operand labels summed first, then pairwise
contractions in a greedy order, each a permute (+ reshape) + matmul, so every contraction is
the fused multiply-reduce kernel of matmul rather than a loop nest of scalars."""
import builtins
import string

import numpy as np

from . import _dtypes as D
from . import _ops as O
from ._array import Array, operand
from ._diagonal import diagonal
from ._errors import FritError, FritTypeError

_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_SYMBOLIC = 64  # a symbolic dim counts as this size in the greedy order heuristic


def _err(msg):
    return FritError("einsum: " + msg)


def _sublist_str(sub):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 52:
            out.append(_LETTERS[int(s)])
        else:
            raise _err("subscript in a sublist must be an integer in [0, 52) or Ellipsis, got %r"
                       % (s,))
    return "".join(out)


def _parse_args(args):
    if not args:
        raise _err("must specify the subscripts and at least one operand")
    if isinstance(args[0], str):
        return args[0].replace(" ", ""), list(args[1:])
    ops, subs = [], []
    rest = list(args)
    while len(rest) >= 2:
        ops.append(rest.pop(0))
        subs.append(_sublist_str(rest.pop(0)))
    spec = ",".join(subs)
    if rest:
        spec += "->" + _sublist_str(rest[0])
    return spec, ops


def _split_labels(term, ndim, what):
    """Labels of one operand term; '...' becomes ('...', k) placeholders resolved by the caller."""
    if term.count("...") > 1 or term.replace("...", "").count(".") > 0:
        raise _err("invalid ellipsis in %s %r" % (what, term))
    head, dots, tail = term.partition("...")
    for ch in head + tail:
        if ch not in _LETTERS:
            raise _err("invalid subscript %r in %s %r (letters a-z, A-Z only)" % (ch, what, term))
    if not dots:
        if ndim is not None and len(term) != ndim:
            raise _err("%s %r has %d subscripts for an operand with %d dimensions"
                       % (what, term, len(term), ndim))
        return list(term), 0
    ne = (ndim - len(head) - len(tail)) if ndim is not None else 0
    if ne < 0:
        raise _err("%s %r has more subscripts than the operand has dimensions (%d)"
                   % (what, term, ndim))
    return list(head) + [("...", i) for i in range(ne)] + list(tail), ne


def einsum(*operands, optimize=False, dtype=None, out=None, casting="safe", order="K"):
    """numpy.einsum. optimize= is accepted (the contraction order is always the greedy one)."""
    if out is not None:
        raise FritTypeError("einsum: out= is not supported (frit arrays are values)")
    spec, ops = _parse_args(operands)
    ops = [operand(x) for x in ops]
    if dtype is not None:
        ops = [O.astype(x, dtype) for x in ops]
    if "->" in spec:
        ins, _, outs = spec.partition("->")
        if "->" in outs:
            raise _err("subscripts %r contain more than one '->'" % spec)
    else:
        ins, outs = spec, None
    terms = ins.split(",")
    if len(terms) != len(ops):
        raise _err("%d operands given for subscripts %r with %d terms"
                   % (len(ops), spec, len(terms)))
    labels, nell = [], 0
    for t, x in zip(terms, ops):
        lab, ne = _split_labels(t, x.ndim, "operand term")
        labels.append(lab)
        nell = builtins.max(nell, ne)
    # ellipsis dims align to the right: operand-local index i of k dims is global nell - k + i
    ell = ["...%d" % i for i in range(nell)]
    for lab in labels:
        k = builtins.sum(1 for s in lab if isinstance(s, tuple))
        for j, s in enumerate(lab):
            if isinstance(s, tuple):
                lab[j] = ell[nell - k + s[1]]
    if outs is None:
        counts = {}
        for lab in labels:
            for s in lab:
                counts[s] = counts.get(s, 0) + 1
        out_labels = ell + sorted(s for s, c in counts.items() if c == 1 and s not in ell)
    else:
        olab, _ = _split_labels(outs, None, "output")
        out_labels = []
        for s in olab:
            if isinstance(s, tuple):
                continue
            out_labels.append(s)
        if "..." in outs:
            pos = outs.index("...")
            head = len(outs[:pos])
            out_labels = out_labels[:head] + ell + out_labels[head:]
        seen = set()
        for s in out_labels:
            if s in seen:
                raise _err("output subscript %r appears more than once in %r" % (s, spec))
            seen.add(s)
        every = set(s for lab in labels for s in lab)
        for s in out_labels:
            if s not in every and not s.startswith("..."):
                raise _err("output subscript %r does not appear in the operands of %r"
                           % (s, spec))
    # sizes: equal or 1 (broadcast)
    size = {}
    for lab, x in zip(labels, ops):
        for s, d in zip(lab, x.shape):
            old = size.get(s)
            if old is None or old == 1:
                size[s] = d
            elif d != 1 and d != old:
                raise _err("size of label %r differs between operands: %s vs %s (shapes %s)"
                           % (s, old, d, [x.shape for x in ops]))
    dt = ops[0].dtype
    for x in ops[1:]:
        dt = O.result_type(dt, x.dtype)
    ops = [O.astype(x, dt) if x.dtype != dt else x for x in ops]
    terms = [_prepare(x, lab, out_labels, labels, i, dt) for i, (x, lab) in enumerate(zip(ops, labels))]
    while len(terms) > 1:
        i, j = _pick_pair(terms, out_labels, size)
        a, b = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = set(out_labels)
        for _, lab in rest:
            keep.update(lab)
        terms = rest + [_contract(a, b, keep, dt)]
    x, lab = terms[0]
    x, lab = _sum_out(x, lab, [s for s in lab if s not in out_labels], dt)
    missing = [s for s in out_labels if s not in lab]
    for s in missing:  # an ellipsis dim no operand has
        x = O.expand_dims(x, -1)
        lab = lab + [s]
    return O.permute_dims(x, [lab.index(s) for s in out_labels]) if lab != out_labels else x


def _sum_out(x, lab, drop, dt):
    if not drop:
        return x, lab
    axes = tuple(lab.index(s) for s in drop)
    if dt is D.bool_:
        y = O.any(x, axis=axes)
    else:
        y = O.sum(x, axis=axes)
        if y.dtype != dt:
            y = O.astype(y, dt)
    return y, [s for s in lab if s not in drop]


def _prepare(x, lab, out_labels, labels, idx, dt):
    """Diagonals of repeated labels, then labels used nowhere else summed out."""
    lab = list(lab)
    while True:
        rep = next((s for s in lab if lab.count(s) > 1), None)
        if rep is None:
            break
        i = lab.index(rep)
        j = lab.index(rep, i + 1)
        x = diagonal(x, 0, i, j)
        lab = [s for k, s in enumerate(lab) if k not in (i, j)] + [rep]
    others = set(out_labels)
    for k, lb in enumerate(labels):
        if k != idx:
            others.update(lb)
    return _sum_out(x, lab, [s for s in dict.fromkeys(lab) if s not in others], dt)


def _dim(d):
    return _SYMBOLIC if d is None else d


def _pick_pair(terms, out_labels, size):
    """Greedy: the pair whose result is smallest (then the cheapest to compute)."""
    best = None
    for i in range(len(terms)):
        for j in range(i + 1, len(terms)):
            la, lb = terms[i][1], terms[j][1]
            keep = set(out_labels)
            for k, t in enumerate(terms):
                if k not in (i, j):
                    keep.update(t[1])
            res = set(s for s in la + lb if s in keep)
            allv = set(la + lb)
            rsize = 1
            for s in res:
                rsize *= _dim(size[s])
            cost = 1
            for s in allv:
                cost *= _dim(size[s])
            key = (rsize, cost, i, j)
            if best is None or key < best:
                best = key
    return best[2], best[3]


def _squeeze_label(x, lab, s):
    i = lab.index(s)
    return O.squeeze(x, i), lab[:i] + lab[i + 1:]


def _contract(a, b, keep, dt):
    (x, la), (y, lb) = a, b
    # labels of one side only that nothing later needs are summed first
    x, la = _sum_out(x, la, [s for s in la if s not in lb and s not in keep], dt)
    y, lb = _sum_out(y, lb, [s for s in lb if s not in la and s not in keep], dt)
    batch = [s for s in la if s in lb and s in keep]
    con = [s for s in la if s in lb and s not in keep]
    # a contracted label of size 1 on one side only broadcasts: sum the other side over it
    for s in list(con):
        dx, dy = x.shape[la.index(s)], y.shape[lb.index(s)]
        if dx == 1 and dy != 1:
            x, la = _squeeze_label(x, la, s)
            y, lb = _sum_out(y, lb, [s], dt)
            con.remove(s)
        elif dy == 1 and dx != 1:
            y, lb = _squeeze_label(y, lb, s)
            x, la = _sum_out(x, la, [s], dt)
            con.remove(s)
    lf = [s for s in la if s not in lb]
    rf = [s for s in lb if s not in la]
    xp = O.permute_dims(x, [la.index(s) for s in batch + lf + con])
    yp = O.permute_dims(y, [lb.index(s) for s in batch + con + rf])
    nb = len(batch)
    xs, ys = xp.shape, yp.shape
    out_lab = batch + lf + rf
    static = None not in xs and None not in ys
    if dt is D.bool_ or (not static and (len(lf) > 1 or len(con) > 1 or len(rf) > 1)):
        # symbolic dims that cannot be merged: broadcast multiply + sum (still one fused
        # multiply-reduce kernel, the form matmul itself lowers to)
        xb = _insert_ones(xp, nb + len(lf), len(rf))
        yb = _insert_ones(O.permute_dims(yp, list(range(nb)) + [nb + len(con) + k for k in range(len(rf))]
                                         + [nb + k for k in range(len(con))]), nb, len(lf))
        prod = O.logical_and(xb, yb) if dt is D.bool_ else O.multiply(xb, yb)
        axes = tuple(range(nb + len(lf) + len(rf), nb + len(lf) + len(rf) + len(con)))
        if not axes:
            return prod, out_lab
        r = O.any(prod, axis=axes) if dt is D.bool_ else O.sum(prod, axis=axes)
        return (O.astype(r, dt) if r.dtype != dt else r), out_lab
    if static:
        bsh = [builtins.max(xs[k], ys[k]) for k in range(nb)]
        L = int(np.prod(xs[nb:nb + len(lf)], dtype=np.int64))
        Cn = int(np.prod(xs[nb + len(lf):], dtype=np.int64))
        R = int(np.prod(ys[nb + len(con):], dtype=np.int64))
        xm = O.reshape(xp, tuple(xs[:nb]) + (L, Cn))
        ym = O.reshape(yp, tuple(ys[:nb]) + (Cn, R))
        r = O.matmul(xm, ym)
        r = O.reshape(r, tuple(bsh) + tuple(xs[nb:nb + len(lf)]) + tuple(ys[nb + len(con):]))
    else:  # each group has at most one axis: size-1 axes for the empty ones, then matmul
        xm = xp if lf else O.expand_dims(xp, nb)
        if not con:
            xm = O.expand_dims(xm, -1)
        ym = yp if con else O.expand_dims(yp, nb)
        if not rf:
            ym = O.expand_dims(ym, -1)
        r = O.matmul(xm, ym)
        if not rf:
            r = O.squeeze(r, -1)
        if not lf:
            r = O.squeeze(r, nb)
    return (O.astype(r, dt) if r.dtype != dt else r), out_lab


def _insert_ones(x, at, k):
    for _ in range(k):
        x = O.expand_dims(x, at)
    return x
