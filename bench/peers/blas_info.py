"""Which BLAS kernel numpy's OpenBLAS picked, for the peer_note of BLAS-backed peers (bench/run
unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the peers' processes, so it picks its best)."""
import os


def blas_note():
  forced = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.get(v)]
  extra = "; forced by %s" % ", ".join(forced) if forced else ""
  try:
    from threadpoolctl import threadpool_info
    info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if info:
      i = info[0]
      return "%s %s, kernel %s, %s threads%s" % (i.get("internal_api"), i.get("version"), i.get("architecture"),
                                                 i.get("num_threads"), extra)
  except ImportError:
    pass
  return "numpy's BLAS (threadpoolctl unavailable: kernel not recorded)" + extra
