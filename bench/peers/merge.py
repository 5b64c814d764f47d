"""Merges peer measurements into frit's benchmark JSON lines (used by bench/run).

stdin: frit's lines {"bench", "value", "unit", "peer", "peer_value"}; argv[1]: a file of peer lines
{"bench", "value", "unit", "n", "peer"}. For a bench the peer measured, "peer"/"peer_value" become
the peer's (converted to frit's unit: K/M/G prefixes of rates) and the bench's own reference
moves to "target"/"target_value" (unless it was only a placeholder with a null value). Benches
the peer should have measured but could not get peer_value null. Every line with both figures
gets "ratio" unless it has one: frit's performance over the peer's, so > 1 means frit is faster
(value/peer_value for rates such as GB/s, peer_value/value for times such as ms); "ratio_best"
compares the fastest runs the same way when both sides give "best_value" (the peer's becomes
"peer_best_value").
Lines that are not JSON pass through unchanged.
"""
import json
import re
import sys

PEER_BENCHES = {"intern_rate", "rewrite_1m_nodes", "rewrite_rate", "simplify_throughput"}
PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9}


def convert(value, from_unit, to_unit):
  if from_unit == to_unit:
    return value
  rate = re.compile(r"^([kKMG]?)(\w+)/s$")
  a, b = rate.match(from_unit), rate.match(to_unit)
  if a and b and a.group(2) == b.group(2):
    return value * PREFIX[a.group(1)] / PREFIX[b.group(1)]
  return None


def add_ratio(rec):
  v, p = rec.get("value"), rec.get("peer_value")
  if "ratio" in rec or not isinstance(v, (int, float)) or not isinstance(p, (int, float)) or v <= 0 or p <= 0:
    return
  rate = str(rec.get("unit", "")).endswith("/s")
  rec["ratio"] = float(f"{(v / p if rate else p / v):.4g}")
  bv, bp = rec.get("best_value"), rec.get("peer_best_value")
  if "ratio_best" not in rec and isinstance(bv, (int, float)) and isinstance(bp, (int, float)) and bv > 0 and bp > 0:
    rec["ratio_best"] = float(f"{(bv / bp if rate else bp / bv):.4g}")


def main():
  peers = {}
  if len(sys.argv) > 1:
    try:
      with open(sys.argv[1]) as f:
        for line in f:
          line = line.strip()
          if line.startswith("{"):
            p = json.loads(line)
            peers[p["bench"]] = p
    except OSError:
      pass
  for line in sys.stdin:
    line = line.rstrip("\n")
    try:
      rec = json.loads(line)
    except ValueError:
      print(line, flush=True)
      continue
    name = rec.get("bench")
    if name in PEER_BENCHES or name in peers:
      if (rec.get("peer") not in (None, "none") and not str(rec["peer"]).startswith("tinygrad")
          and rec.get("peer_value") is not None):
        rec["target"], rec["target_value"] = rec.get("peer"), rec.get("peer_value")
      p = peers.get(name)
      rec["peer"] = p["peer"] if p else "tinygrad"
      rec["peer_value"] = convert(p["value"], p["unit"], rec.get("unit", "")) if p else None
      if p and rec["peer_value"] is not None:
        rec["peer_value"] = float(f"{rec['peer_value']:.4g}")
      if p and "note" in p:
        rec["peer_note"] = p["note"]
      if p and "best_value" in p:
        rec["peer_best_value"] = convert(p["best_value"], p["unit"], rec.get("unit", ""))
    add_ratio(rec)
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
  main()
