"""Reuse of large output buffers between jitted calls. A fresh 64 MB numpy array is mapped anew
by malloc on every call, and the kernel writing it then takes 16k page faults and the kernel's
page zeroing: on this VM that cost more than the kernel itself (a memory-bound elementwise chain
ran at a third of copy bandwidth). Outputs of 1 MiB or more are carved from raw byte buffers the
pool keeps; a buffer is free again when nothing but the pool refers to it (every numpy view of an
output holds a reference to its owner), so no finalizer or C allocator is needed.

The pool's outputs start on a 64-byte boundary (a cache line, one AVX-512 vector). numpy's large
arrays start 16 bytes past one, and a kernel that reads such an array splits every vector load
across two lines: a matrix-vector product of a 1024^2 float32 matrix ran 1.3x slower. (Aligning
the smaller outputs too cost 2.3 us a call at 64 KiB, more than their kernels gained.)"""
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 20      # smaller outputs come from numpy's allocator as before
ALIGN = 64
MAX_POOL_BYTES = 1 << 28  # pool bytes past which free buffers are dropped (256 MiB)
_getrefcount = sys.getrefcount
_lock = threading.Lock()
_buffers = {}             # nbytes -> list of raw uint8 arrays (in use or free)
_start = {}               # id(raw) -> the offset of its first 64-byte boundary
_total = 0


def _free(raw):
    # free: referred to by the pool's list, the caller's loop variable, this argument and
    # getrefcount's own argument only; an output array (or any view of it) adds its base
    return _getrefcount(raw) <= 4


def empty(shape, dtype):
    """np.empty(shape, dtype), from a reused buffer when the array is large."""
    dt = np.dtype(dtype)
    n = dt.itemsize
    for d in shape:
        n *= d
    if n < MIN_BYTES:
        return np.empty(shape, dt)
    global _total
    with _lock:
        lst = _buffers.get(n)
        if lst is not None:
            for k in range(len(lst)):  # (not enumerate: its tuple would hold a reference)
                raw = lst[k]
                if _free(raw):
                    del lst[k]  # (by position: list.remove would compare arrays)
                    lst.append(raw)  # most recently used last
                    at = _start[id(raw)]
                    return raw[at:at + n].view(dt).reshape(shape)
        raw = np.empty(n + ALIGN, np.uint8)
        at = _start[id(raw)] = -raw.__array_interface__["data"][0] % ALIGN
        _buffers.setdefault(n, []).append(raw)
        _total += n
        if _total > MAX_POOL_BYTES:
            _trim()
    return raw[at:at + n].view(dt).reshape(shape)


def _trim():
    """Drops free buffers, the largest sizes and the least recently used first, until the pool
    is under its cap."""
    global _total
    for n in sorted(_buffers, key=lambda k: -k):
        lst = _buffers[n]
        k = 0
        while k < len(lst) and _total > MAX_POOL_BYTES:
            raw = lst[k]
            if _free(raw):
                del lst[k]
                del _start[id(raw)]
                _total -= n
            else:
                k += 1
        if not lst:
            del _buffers[n]
        if _total <= MAX_POOL_BYTES:
            return
