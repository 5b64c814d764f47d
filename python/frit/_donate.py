"""Buffer donation for frit.jit (donate_argnums): which output takes which donated argument's
memory (declared to the program with frit_program_donate), which donations a call can use, and
what a donated frit Array refers to afterwards. See docs/training.md "In-place updates"."""
import ctypes as C
import operator

from . import _lib as L
from ._errors import FritError

_donate = L.fn["frit_program_donate"]
_clear_error = L.fn["frit_clear_error"]
_first = operator.itemgetter(0)
LEAF = "A"  # frit._jit's treedef of an array leaf


class Donated:
    """Stands in for the data (Node.np) of a node whose memory was donated to a jitted call: any
    use (shape, data pointer, conversion) raises, naming the function."""
    __slots__ = ("fn_name",)

    def __init__(self, fn_name):
        self.fn_name = fn_name

    def error(self):
        return FritError("this array was donated to %s (donate_argnums): its memory now holds an "
                         "output of that call, so the old value is gone; use the call's outputs (a "
                         "donated frit Array passed directly already refers to its output)" % self.fn_name)

    def __getattr__(self, name):
        raise self.error()

    def __array__(self, *a, **k):
        raise self.error()

    def __len__(self):
        raise self.error()


def nleaves(tree):
    """Array leaves under a treedef of frit._jit._flatten (or an argument entry of _signature)."""
    if tree is LEAF:
        return 1
    if type(tree) is not tuple or not tree:
        return 0
    tag = tree[0]
    if tag is dict:
        return sum(nleaves(c) for c in tree[2])
    if tag.__class__ is str:
        return sum(nleaves(c) for _, c in tree[1]) if tag == "kw" else 0  # "s"/"S": static
    return sum(nleaves(c) for c in tree[1])  # tuple, list, namedtuple


def paths(tree, prefix, out):
    """Appends the path (dict keys and sequence positions) of each array leaf under tree."""
    if tree is LEAF:
        out.append(prefix)
    elif type(tree) is tuple and tree:
        tag = tree[0]
        if tag is dict:
            for k, c in zip(tree[1], tree[2]):
                paths(c, prefix + (k,), out)
        elif tag.__class__ is not str:
            for i, c in enumerate(tree[1]):
                paths(c, prefix + (i,), out)
    return out


def declare(prog, argnums, trees, data, dts, sizes, slots, specs, nuser, out_tree):
    """(leaf, output, in place) of each leaf of the arguments argnums that an output of its shape
    and dtype takes, declared to prog: first the output at the same path (dict keys and positions
    below the argument and below the returned tuple: params["w"] -> new["w"]), then the first
    free one in output order. slots: (program input, leaf); specs: per output (shape spec,
    storage, dtype) as frit._jit builds them; nuser: the user's outputs (the rest are checks)."""
    donated = []
    in_path = {}
    pos = 0
    for i, tr in enumerate(trees):
        if type(tr) is tuple and tr and tr[0] == "kw":
            break
        n = nleaves(tr)
        if i in argnums:
            donated.extend(range(pos, pos + n))
            for j, path in enumerate(paths(tr, (), [])):
                in_path[pos + j] = path
        pos += n
    out_paths = paths(out_tree, (), [])
    if out_tree is not LEAF and type(out_tree) is tuple and out_tree[0] in (tuple, list):
        out_paths = [q[1:] for q in out_paths]
    slot_of = {li: slot for slot, li in slots}
    shapes = []
    for spec, _, dt in specs[:nuser]:
        if spec is None:
            shapes.append(None)
        else:
            shapes.append((tuple(d if d >= 0 else sizes[-d - 1] for d in spec), dt))
    taken, done = set(), set()
    out = []
    ip = C.c_int()
    for by_path in (True, False):
        for li in donated:
            slot = slot_of.get(li)
            if slot is None or li in done:  # not read by the program, or matched already
                continue
            want = (data[li].shape, dts[li])
            for k, sk in enumerate(shapes):
                if k in taken or sk is None or sk[0] != want[0] or sk[1] != want[1]:
                    continue
                if by_path and (k >= len(out_paths) or out_paths[k] != in_path[li]):
                    continue
                if _donate(prog.ptr, slot, k, C.byref(ip)):
                    _clear_error(prog.sess.ptr)  # e.g. shapes equal now but not symbolically
                    continue
                taken.add(k)
                done.add(li)
                out.append((li, k, bool(ip.value)))
                break
    return tuple(sorted(out))


def usable(donate_slots, ins, leaves):
    """output -> the donated storage array it is written into, this call: writeable, non-empty,
    and not overlapping another donated leaf (two outputs cannot share memory; one of them gets a
    fresh array). donate_slots: (leaf, output, program input); ins: the input pointer table."""
    cand = []
    for li, k, slot in donate_slots:
        a = leaves[li]
        if a.size and a.flags.writeable:
            p = ins[slot]
            cand.append((p, p + a.nbytes, k, a))
    if len(cand) > 1:
        cand.sort(key=_first)
    use = {}
    end = 0
    for p, q, k, a in cand:
        if p >= end:
            use[k] = a
            end = q
    return use


def retire(entry, leaves, objs, use, outs, array_cls):
    """After a donating run: each donated frit Array passed directly refers to its output's node
    (outs None: the run failed, so to nothing); the old node, which lazy expressions may hold,
    raises when used (entry.tomb)."""
    if objs is None:
        return
    for li, k, _ in entry.donate:
        a = use.get(k)
        if a is not leaves[li]:
            continue
        o = objs[li]
        if o.__class__ is array_cls:
            old = o._n
            if old.np is a:
                old.np = entry.tomb if outs is not None else Donated(entry.fn_name + " (the call failed)")
                old.dptr = old.tc = None
                if outs is not None:
                    o._n = outs[k]._n
