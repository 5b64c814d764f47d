"""Large outputs (frit._outpool): carved from reused buffers, on a 64-byte boundary, and never
handed out again while any view of them lives."""
import numpy as np

import frit


def _addr(a):
    return np.asarray(a).__array_interface__["data"][0]


def test_large_outputs_start_on_a_cache_line_and_are_reused_once_dropped():
    x = np.arange(1 << 19, dtype=np.float32)  # 2 MiB
    f = frit.jit(lambda a: a * 2.0)
    first = f(x)
    assert _addr(first) % 64 == 0
    np.testing.assert_array_equal(np.asarray(first), x * 2.0)
    at = _addr(first)
    del first
    second = f(x)
    assert _addr(second) == at  # the dropped buffer came back
    np.testing.assert_array_equal(np.asarray(second), x * 2.0)


def test_a_live_view_keeps_its_buffer_out_of_the_pool():
    x = np.arange(1 << 19, dtype=np.float64)  # 4 MiB
    f = frit.jit(lambda a: a + 1.0)
    out = np.asarray(f(x))
    tail = out[10:]
    del out
    other = f(x * 3.0)
    assert _addr(other) % 64 == 0
    assert _addr(other) != _addr(tail) - 10 * 8
    np.testing.assert_array_equal(tail, x[10:] + 1.0)
    np.testing.assert_array_equal(np.asarray(other), x * 3.0 + 1.0)


def test_eager_results_of_a_mebibyte_or_more_are_aligned():
    a = frit.asarray(np.ones((512, 1024), np.float32))
    r = (a + a).numpy()
    assert _addr(r) % 64 == 0
    np.testing.assert_array_equal(r, np.full((512, 1024), 2.0, np.float32))
