"""Peer measurements for frit's IR benchmarks, taken with tinygrad's UOps in the same run.

Builds the graph shapes bench/bench_*.c build and times tinygrad doing the same work:
  intern_rate          creating the 1M-node chain of bench_rewrite.c (distinct nodes per second)
  rewrite_1m_nodes     graph_rewrite of that chain with the same ten identity/folding rules (s)
  rewrite_rate         the same, in nodes per second
  simplify_throughput  UOp.simplify() on bench_simplify.c's index expressions (expr/s)
Prints one JSON object per metric: {"bench", "value", "unit", "n", "peer"}; when the graph had to
be smaller than frit's (FRIT_PEER_NODES), the time is scaled up per node and "n" says so.
Usage: tinygrad_ir.py [METRIC...]   (no metric: all)
"""
import json
import os
import sys
import time

# the 1M-node chain is one deep path; tinygrad's guard against runaway rewrites counts its depth
os.environ.setdefault("REWRITE_STACK_LIMIT", "100000000")

import tinygrad  # noqa: E402
from tinygrad.dtype import dtypes  # noqa: E402
from tinygrad.uop.ops import UOp, Ops, PatternMatcher, UPat, graph_rewrite  # noqa: E402

try:
  from importlib.metadata import version
  PEER = "tinygrad " + version("tinygrad")
except Exception:  # pragma: no cover - metadata missing
  PEER = "tinygrad"

FRIT_NODES = 1_000_000


def emit(bench, value, unit, n, **extra):
  print(json.dumps({"bench": bench, "value": value, "unit": unit, "n": n, "peer": PEER, **extra}), flush=True)


def build_chain(n):
  """The chain of bench_rewrite.c: link k applies +v[k%16], +0, *1 or *k to the previous value."""
  vs = [UOp.variable(f"v{i}", 0, 1000, dtype=dtypes.int64) for i in range(16)]
  zero, one = UOp.const(0, dtypes.int64), UOp.const(1, dtypes.int64)
  x, k, made = vs[0], 0, 0
  add, mul, i64 = Ops.ADD, Ops.MUL, dtypes.int64
  while made < n:
    m = k % 4
    if m == 0:
      x = UOp(add, i64, (x, vs[k % 16])); made += 1
    elif m == 1:
      x = UOp(add, i64, (x, zero)); made += 1
    elif m == 2:
      x = UOp(mul, i64, (x, one)); made += 1
    else:
      x = UOp(mul, i64, (x, UOp.const(k, i64))); made += 2  # a new constant and the MUL
    k += 1
  return x, made


# the rules of bench_rewrite.c, in tinygrad's notation (ADD/MUL patterns match either order);
# tinygrad has no MIN op, so (min x x) -> x has no counterpart
RULES = PatternMatcher([
  (UPat.var("x") + 0, lambda x: x),
  (UPat.var("x") * 1, lambda x: x),
  (UPat.var("x", dtype=dtypes.ints) * 0, lambda x: x.const_like(0)),
  (UPat.var("x") - UPat.var("x"), lambda x: x.const_like(0)),
  ((UPat.var("x") * UPat.cvar("c0")) + (UPat.var("x") * UPat.cvar("c1")), lambda x, c0, c1: x * (c0 + c1)),
  ((UPat.var("x") + UPat.cvar("c0")) + UPat.cvar("c1"), lambda x, c0, c1: x + (c0 + c1)),
  ((UPat.var("x") * UPat.cvar("c0")) * UPat.cvar("c1"), lambda x, c0, c1: x * (c0 * c1)),
  (UPat.var("x") // 1, lambda x: x),
  (UPat.var("x").maximum(UPat.var("x")), lambda x: x),
])


def measure_rewrite(wanted):
  n = int(os.environ.get("FRIT_PEER_NODES", FRIT_NODES))
  t0 = time.perf_counter()
  root, made = build_chain(n)
  t1 = time.perf_counter()
  graph_rewrite(root, RULES)
  t2 = time.perf_counter()
  build_s, rw_s = t1 - t0, t2 - t1
  note = {} if made >= FRIT_NODES else {"note": f"measured on {made} nodes; per-node figures, times scaled to {FRIT_NODES}"}
  if "intern_rate" in wanted:
    emit("intern_rate", made / build_s, "nodes/s", made, **note)
  if "rewrite_1m_nodes" in wanted:
    emit("rewrite_1m_nodes", rw_s * FRIT_NODES / made, "s", made, **note)
  if "rewrite_rate" in wanted:
    emit("rewrite_rate", made / rw_s, "nodes/s", made, **note)


def index_exprs(count):
  """The expressions of bench_simplify.c: ((a*K+b)*M + c + off) with a pool of 64 variable
  triples, then one of //M%K, //M//K, %M, < bound. Built before timing, like frit's."""
  import random
  rng = random.Random(0x2545F4914F6CDD1D)
  # tinygrad's index dtype (the default): with int64 variables it inserts casts that stop it from
  # simplifying index arithmetic at all
  pool = []
  for i in range(64):
    k, m = rng.randint(2, 16), rng.randint(2, 32)
    pool.append((k, m, UOp.variable(f"a{i}", 0, rng.randint(1, 64)),
                 UOp.variable(f"b{i}", 0, k - 1), UOp.variable(f"c{i}", 0, m - 1)))
  dt = pool[0][2].dtype
  def c(v): return UOp.const(v, dt)
  # raw constructors: tinygrad's operators simplify index arithmetic as they build it, which
  # would leave .simplify() nothing to do. Its symbolic rules work on FLOORDIV/FLOORMOD (Python's
  # // and %); on these non-negative values they equal frit's truncating IDIV/MOD.
  def alu(op, a, b): return UOp(op, dtypes.bool if op is Ops.CMPLT else dt, (a, b))
  out = []
  for _ in range(count):
    k, m, a, b, cv = pool[rng.randrange(64)]
    if rng.randrange(2): cv = pool[rng.randrange(64)][4]
    idx = alu(Ops.ADD, alu(Ops.MUL, a, c(k)), b)
    idx = alu(Ops.ADD, alu(Ops.MUL, idx, c(m)), cv)
    idx = alu(Ops.ADD, idx, c(rng.randint(0, 3) * m))
    form = rng.randrange(4)
    if form == 0: e = alu(Ops.FLOORMOD, alu(Ops.FLOORDIV, idx, c(m)), c(k))
    elif form == 1: e = alu(Ops.FLOORDIV, alu(Ops.FLOORDIV, idx, c(m)), c(k))
    elif form == 2: e = alu(Ops.FLOORMOD, idx, c(m))
    else: e = alu(Ops.CMPLT, idx, c(rng.randint(1, 4) * m * k))
    out.append(e)
  return out


def measure_simplify():
  count = int(os.environ.get("FRIT_PEER_EXPRS", 10000))
  exprs = index_exprs(count)
  t0 = time.perf_counter()
  results = [e.simplify() for e in exprs]
  dt = time.perf_counter() - t0
  changed = sum(r is not e for r, e in zip(results, exprs))
  emit("simplify_throughput", count / dt, "expr/s", count, changed=changed)


def main(argv):
  all_metrics = ["intern_rate", "rewrite_1m_nodes", "rewrite_rate", "simplify_throughput"]
  wanted = set(argv) & set(all_metrics) if argv else set(all_metrics)
  if wanted & {"intern_rate", "rewrite_1m_nodes", "rewrite_rate"}:
    measure_rewrite(wanted)
  if "simplify_throughput" in wanted:
    measure_simplify()


if __name__ == "__main__":
  sys.setrecursionlimit(100000)
  main(sys.argv[1:])
