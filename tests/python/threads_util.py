"""A helper for the thread tests: runs one function in several threads and reports the first
failure in the main thread."""
import threading


def run_threads(target, n):
    """Runs target(0) .. target(n - 1) in n threads; raises the first failure of any."""
    errors = []

    def wrap(tid):
        try:
            target(tid)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append((tid, e))

    ts = [threading.Thread(target=wrap, args=(t,)) for t in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise AssertionError("thread %d: %r" % errors[0]) from errors[0][1]
