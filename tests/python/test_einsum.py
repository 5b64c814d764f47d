"""frit.einsum against np.einsum: explicit and implicit output, '...', repeated labels
(diagonals), summed labels, 1..4 operands, size-1 broadcasting, the sublist form, dtypes; eager
and under frit.jit with two shapes; kernel counts (a matmul-like einsum compiles like matmul);
bad subscripts."""
import numpy as np
import pytest

import frit

R = np.random.default_rng(0)


def A(*shape):
    return R.standard_normal(shape)


CASES = [
    ("ij,jk->ik", (3, 4), (4, 5)), ("ij,jk", (3, 4), (4, 5)), ("ii", (4, 4)), ("ii->i", (4, 4)),
    ("ij->ji", (3, 4)), ("ij", (3, 4)), ("ji", (3, 4)), ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("i,i", (5,), (5,)), ("i,i->i", (5,), (5,)),
    ("i,j->ij", (3,), (4,)), ("ijk,jkl->il", (2, 3, 4), (3, 4, 5)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    ("iij->ij", (3, 3, 2)), ("ij->", (3, 4)), ("ij->i", (3, 4)), ("...i,...i->...", (2, 3, 4), (4,)),
    ("ij,kl->ijkl", (2, 3), (2, 2)), ("abc,cd,de->abe", (2, 3, 4), (4, 5), (5, 2)),
    ("i,i,i->", (4,), (4,), (4,)), ("ij,ij->ij", (3, 4), (1, 4)), ("ij,jk->ik", (3, 1), (4, 5)),
    ("...,...", (3,), (2, 3)), ("Ab,bC", (2, 3), (3, 4)), ("iji->j", (3, 2, 3)), ("ijk,ikj->", (2, 3, 3), (2, 3, 3)),
    ("i...->...", (3, 2, 4)), ("...ii->...i", (2, 3, 3)), ("ij...,jk...->ik...", (2, 3, 4), (3, 5, 4)),
    ("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 5), (5, 2)), ("ij,j", (3, 4), (4,)), (",ij->ij", (), (2, 3)),
    ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)), ("ijk->kji", (2, 3, 4)), ("iii->i", (3, 3, 3)),
    ("i,jk->", (3,), (2, 2)), ("ij,ji->", (3, 4), (4, 3)), ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_einsum_eager(case):
    spec, *shapes = case
    ops = [A(*s) for s in shapes]
    want = np.einsum(spec, *ops)
    got = frit.einsum(spec, *[frit.asarray(o) for o in ops])
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_einsum_optimize_sublist_dtypes():
    a, b = A(3, 4), A(4, 5)
    fa, fb = frit.asarray(a), frit.asarray(b)
    for opt in (True, False, "greedy", "optimal"):
        np.testing.assert_allclose(np.asarray(frit.einsum("ij,jk->ik", fa, fb, optimize=opt)), a @ b)
    np.testing.assert_allclose(np.asarray(frit.einsum(fa, [0, 1], fb, [1, 2], [0, 2])), a @ b)
    np.testing.assert_allclose(np.asarray(frit.einsum(fa, [Ellipsis, 1], fb, [1, 2])),
                               np.einsum(a, [Ellipsis, 1], b, [1, 2]))
    ai = R.integers(-50, 50, (3, 4)).astype(np.int8)
    bi = R.integers(-50, 50, (4, 2)).astype(np.int8)
    for spec in ("ij,jk->ik", "ij->", "ij->j"):
        ops = (ai, bi) if "," in spec else (ai,)
        want = np.einsum(spec, *ops)
        got = frit.einsum(spec, *[frit.asarray(o) for o in ops])
        assert got.dtype == want.dtype, spec
        np.testing.assert_array_equal(np.asarray(got), want)
    m = R.random((3, 3)) < 0.5
    for spec in ("ij,jk->ik", "ij->", "ii->i"):
        ops = (m, m) if "," in spec else (m,)
        want = np.einsum(spec, *ops)
        got = frit.einsum(spec, *[frit.asarray(o) for o in ops])
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    a32 = a.astype(np.float32)
    got = frit.einsum("ij,jk->ik", frit.asarray(a32), fb)
    assert got.dtype == np.einsum("ij,jk->ik", a32, b).dtype
    got = frit.einsum("ij->i", frit.asarray(a32), dtype=frit.float64)
    assert got.dtype == frit.float64


JIT_CASES = [("ij,jk->ik", lambda n: [(n, 4), (4, n + 1)]),
             ("bij,bjk->bik", lambda n: [(2, n, 3), (2, 3, n)]),
             ("ijk,jkl->il", lambda n: [(n, 3, n), (3, n, 4)]),
             ("ii->i", lambda n: [(n, n)]),
             ("...ij,...j->...i", lambda n: [(n, 2, 3), (3,)]),
             ("ij,jk,kl->il", lambda n: [(2, n), (n, 3), (3, n)]),
             ("bhqd,bhkd->bhqk", lambda n: [(2, 2, n, 4), (2, 2, n + 1, 4)])]


@pytest.mark.parametrize("spec,shapes", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_einsum_jit(spec, shapes):
    f = frit.jit(lambda *xs: frit.einsum(spec, *xs))
    for n in (3, 6):
        ops = [A(*s) for s in shapes(n)]
        np.testing.assert_allclose(np.asarray(f(*[frit.asarray(o) for o in ops])), np.einsum(spec, *ops),
                                   rtol=1e-12, atol=1e-12)


def _names(f, *xs):
    return [k.name for k in f.lower(*xs).kernels]


def _products(names):
    """The multiply-reduce kernels: a 2-D matmul of symbolic size also copies B into column
    panels first (tensor/linalg.c), a kernel that einsum shares with matmul."""
    assert all("mul_sum" in n or "pad" in n or "contiguous" in n for n in names), names
    return [n for n in names if "mul_sum" in n]


def test_einsum_kernels_like_matmul():
    a, b = frit.asarray(A(8, 16)), frit.asarray(A(16, 4))
    e = _names(frit.jit(lambda x, y: frit.einsum("ij,jk->ik", x, y)), a, b)
    m = _names(frit.jit(lambda x, y: frit.matmul(x, y)), a, b)
    assert e == m and len(_products(e)) == 1 and len(e) <= 2
    a3, b3 = frit.asarray(A(2, 8, 16)), frit.asarray(A(2, 16, 4))
    assert len(_names(frit.jit(lambda x, y: frit.einsum("bij,bjk->bik", x, y)), a3, b3)) == 1
    # transposed operands and a chain: one fused multiply-reduce kernel per contraction
    assert len(_products(_names(frit.jit(lambda x, y: frit.einsum("ji,kj->ik", x, y)),
                                frit.asarray(A(16, 8)), frit.asarray(A(4, 16))))) == 1
    c = frit.asarray(A(4, 3))
    assert len(_products(_names(frit.jit(lambda x, y, z: frit.einsum("ij,jk,kl->il", x, y, z)), a, b, c))) <= 2


def test_einsum_greedy_order():
    # the greedy order contracts (jk,kl) first (the smallest result); values checked
    a, b, c = A(100, 100), A(100, 100), A(100, 1)
    got = frit.einsum("ij,jk,kl->il", *[frit.asarray(x) for x in (a, b, c)])
    np.testing.assert_allclose(np.asarray(got), a @ b @ c, rtol=1e-10)


BAD = [("ij,jk->ik", [(3, 4)], "operands"), ("ij->ik", [(3, 4)], "does not appear"),
       ("ij->ii", [(3, 3)], "more than once"), ("ijk", [(3, 4)], "subscripts"),
       ("ij,jk", [(3, 4), (5, 6)], "size of label"), ("i1", [(3, 4)], "invalid subscript"),
       ("i.j", [(3, 4)], "ellipsis"), ("ij->i->j", [(3, 4)], "->")]


@pytest.mark.parametrize("spec,shapes,msg", BAD, ids=[b[0] for b in BAD])
def test_einsum_errors(spec, shapes, msg):
    with pytest.raises(ValueError):
        np.einsum(spec, *[A(*s) for s in shapes])
    with pytest.raises(frit.FritError, match=msg):
        frit.einsum(spec, *[frit.asarray(A(*s)) for s in shapes])


def _random_case(rnd, rng):
    """Random subscripts over labels a-d (sizes 1-4, some size-1 broadcasts), 1-3 operands,
    sometimes '...', half of them with an explicit output."""
    sizes = {c: rnd.choice([1, 2, 3, 4]) for c in "abcd"}
    use_ell = rnd.random() < 0.3
    ell = tuple(rnd.choice([1, 2, 3]) for _ in range(rnd.randint(0, 2)))
    terms, ops = [], []
    for _ in range(rnd.randint(1, 3)):
        t = "".join(rnd.choice("abcd") for _ in range(rnd.randint(0, 3)))
        shape = [sizes[c] for c in t]
        if t and rnd.random() < 0.2:
            shape[rnd.randrange(len(t))] = 1
        if use_ell and rnd.random() < 0.7:
            p = rnd.randint(0, len(t))
            t, shape = t[:p] + "..." + t[p:], shape[:p] + list(ell[rnd.randint(0, len(ell)):]) + shape[p:]
        terms.append(t)
        ops.append(rng.standard_normal(shape))
    spec = ",".join(terms)
    if rnd.random() < 0.5:
        labs = sorted(set(spec) - set(".,"))
        spec += "->" + ("..." if "..." in spec and rnd.random() < 0.7 else "") + \
            "".join(rnd.sample(labs, rnd.randint(0, len(labs))))
    return spec, ops


def test_einsum_random():
    """100 random subscript strings numpy accepts (numpy as the oracle), realized as one program."""
    import random
    rnd, rng = random.Random(1), np.random.default_rng(1)
    cases = []
    while len(cases) < 100:
        spec, ops = _random_case(rnd, rng)
        try:
            want = np.einsum(spec, *ops)
        except ValueError:
            continue
        cases.append((spec, ops, want, frit.einsum(spec, *[frit.asarray(o) for o in ops])))
    frit.realize(*[c[3] for c in cases])
    for spec, ops, want, got in cases:
        assert got.shape == want.shape, spec
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10, err_msg=spec)
