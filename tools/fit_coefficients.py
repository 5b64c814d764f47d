"""Re-derives the fitted coefficients of the C prelude's float32 functions (src/codegen/prelude.c)
that are not Taylor series: least maximum relative error by Lawson's iteration (weighted linear
least squares on Chebyshev points, the weights raised where the error is largest), with the
coefficients rounded to double inside the loop so that the error printed is the one the C code
gets. Needs mpmath (a dependency of torch's sympy; `pip install mpmath` otherwise).
Usage: python3 tools/fit_coefficients.py [tan|sinh|cosh]... (none: all). Prints each function's
coefficients as C hex literals and its maximum relative error, checked on a denser grid."""
import sys

import mpmath as mp

mp.mp.prec = 120


def cheb(lo, hi, m):
    return [lo + (hi - lo) * (1 + mp.cos(mp.pi * (i + mp.mpf(1) / 2) / m)) / 2 for i in range(m)]


def lawson(xs, target, fixed, num, den=(), iters=80):
    """Coefficients c (for the basis functions num) and d (den) minimising the maximum of
    |(fixed(x) + sum c_j num_j(x)) / (1 + sum d_j den_j(x)) / target(x) - 1| over xs. The
    rational case is linearised around the previous denominator (Loeb)."""
    w, qprev, best = [mp.mpf(1)] * len(xs), [mp.mpf(1)] * len(xs), None
    for _ in range(iters):
        a = mp.matrix(len(xs), len(num) + len(den))
        b = mp.matrix(len(xs), 1)
        for i, x in enumerate(xs):
            t = target(x)
            s = mp.sqrt(w[i]) / (qprev[i] * t)
            for j, f in enumerate(num):
                a[i, j] = s * f(x)
            for j, f in enumerate(den):
                a[i, len(num) + j] = -s * t * f(x)
            b[i] = s * (t - fixed(x))
        sol = mp.lu_solve(a.T * a, a.T * b)
        c = [mp.mpf(float(sol[j])) for j in range(len(num))]
        d = [mp.mpf(float(sol[len(num) + j])) for j in range(len(den))]
        q = [1 + sum(dj * f(x) for dj, f in zip(d, den)) for x in xs]
        errs = [abs((fixed(x) + sum(cj * f(x) for cj, f in zip(c, num))) / q[i] / target(x) - 1)
                for i, x in enumerate(xs)]
        e = max(errs)
        if best is None or e < best[0]:
            best = (e, c, d)
        qprev = q
        w = [wi * ei / e for wi, ei in zip(w, errs)]
        total = sum(w)
        w = [wi / total * len(w) for wi in w]
    return best[1], best[2]


def report(name, lo, hi, approx, target, c, d=()):
    worst = max(abs(approx(x) / target(x) - 1) for x in (lo + (hi - lo) * (i + 1) / 8000 for i in range(8000)))
    print("%s: max relative error 2^%.2f" % (name, float(mp.log(worst, 2))))
    print("  numerator:", ", ".join(float(v).hex() for v in c))
    if d:
        print("  denominator:", ", ".join(float(v).hex() for v in d))


def fit_tan():
    """tan(r) = (r + r z P(z)) / Q(z), z = r^2, |r| <= pi/4 (a little more): P of degree 2, Q of
    degree 3 with Q(0) = 1 (FRIT_TAN_RAT)"""
    hi = mp.pi / 4 * mp.mpf("1.0001")
    xs = cheb(0, hi, 400)
    g = lambda x: mp.tan(x) / x  # noqa: E731 - the fit is of tan(r)/r in z
    num = [lambda x, k=k: (x * x) ** k for k in (1, 2)]
    den = [lambda x, k=k: (x * x) ** k for k in (1, 2, 3)]
    c, d = lawson(xs, g, lambda x: 1, num, den)
    approx = lambda x: x * (1 + sum(cj * (x * x) ** k for cj, k in zip(c, (1, 2)))) / (  # noqa: E731
        1 + sum(dj * (x * x) ** k for dj, k in zip(d, (1, 2, 3))))
    report("tan", mp.mpf(0), hi, approx, mp.tan, c, d)


def fit_cosh():
    """cosh(r) = 1 + z/2 + z^2 C(z), |r| <= ln2/2, C of degree 2 (frit_sinhcosh_red)"""
    hi = mp.log(2) / 2 * mp.mpf("1.0000001")
    ks = (2, 3, 4)
    c, _ = lawson(cheb(0, hi, 300), mp.cosh, lambda x: 1 + x * x / 2, [lambda x, k=k: x ** (2 * k) for k in ks],
                  iters=60)
    report("cosh", mp.mpf(0), hi, lambda x: 1 + x * x / 2 + sum(cj * x ** (2 * k) for cj, k in zip(c, ks)), mp.cosh, c)


def fit_sinh():
    """sinh(r) = r + r z S(z), |r| <= ln2/2, S of degree 3 (frit_sinhcosh_red)"""
    hi = mp.log(2) / 2 * mp.mpf("1.0000001")
    ks = (1, 2, 3, 4)
    c, _ = lawson(cheb(0, hi, 300), mp.sinh, lambda x: x, [lambda x, k=k: x ** (2 * k + 1) for k in ks], iters=60)
    report("sinh", mp.mpf(0), hi, lambda x: x + sum(cj * x ** (2 * k + 1) for cj, k in zip(c, ks)), mp.sinh, c)


FITS = {"tan": fit_tan, "sinh": fit_sinh, "cosh": fit_cosh}

if __name__ == "__main__":
    for name in sys.argv[1:] or list(FITS):
        FITS[name]()
