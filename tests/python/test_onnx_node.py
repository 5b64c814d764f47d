"""The ONNX importer on the ONNX backend node tests shipped by Debian's libonnx-testdata (one
test per case, compared with the case's stored outputs). Cases using ops, attributes or types frit
does not support are skipped with the importer's message; docs/onnx.md has the table
(tests/python/onnx_table.py writes it).

The cases run on frit's reference interpreter: 932 tiny models are about 1000 small programs,
which the interpreter runs in seconds while compiling them takes over a minute with a cold kernel
cache (the results are the same; FRIT_ONNX_COMPILED=1 runs them compiled). The whole models in
test_onnx_models.py run compiled."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import onnx_cases  # noqa: E402

pytest.importorskip("onnx")

if onnx_cases.importer_missing():
    pytest.skip(onnx_cases.importer_missing(), allow_module_level=True)
CASES = onnx_cases.cases()

# Cases frit runs but whose stored outputs it does not match, with the reason (strict: a case that
# starts passing must be taken off the list).
KNOWN = {
    "test_cast_FLOAT_to_BFLOAT16": "the stored outputs truncate to bfloat16; frit rounds to nearest even",
    "test_castlike_BFLOAT16_to_FLOAT": "the stored 'like' input is (1,), the graph declares rank 2",
    "test_castlike_BFLOAT16_to_FLOAT_expanded": "the stored 'like' input is (1,), the graph declares rank 2",
    "test_castlike_FLOAT_to_BFLOAT16": "the stored 'like' input is (1,), the graph declares rank 2",
    "test_castlike_FLOAT_to_BFLOAT16_expanded": "the stored 'like' input is (1,), the graph declares rank 2",
}


@pytest.fixture(scope="module", autouse=True)
def _interpreted():
    """This module's tests in an interpreting session; the thread's sessions restored after."""
    if os.environ.get("FRIT_ONNX_COMPILED") == "1":
        yield
        return
    import frit
    from frit import _session
    t = _session._tls
    saved = (t.current, t.eager, t.prev)
    frit.new_session(interpret=True)
    yield
    t.current, t.eager, t.prev = saved


@pytest.mark.skipif(not CASES, reason="no ONNX node tests at %s (apt-get install libonnx-testdata)"
                    % onnx_cases.TESTDATA)
@pytest.mark.parametrize("name", CASES or ["none"])
def test_node_case(name):
    if name in KNOWN:
        pytest.xfail(KNOWN[name])
    status, why = onnx_cases.run_case(name)
    if status == "unsupported":
        pytest.skip(why)
    assert status == "pass", why


def test_import_rate():
    """At least 80% of the cases import (every op of the graph has a converter); each of those
    is checked by test_node_case, which skips only for an attribute or type frit lacks."""
    if not CASES:
        pytest.skip("no ONNX node tests installed")
    import frit
    ok = 0
    for name in CASES:
        with open(os.path.join(onnx_cases.TESTDATA, name, "model.onnx"), "rb") as f:
            data = f.read()
        try:
            frit.import_onnx(data)
            ok += 1
        except frit.FritError:
            pass
    assert ok >= 0.8 * len(CASES), "%d of %d cases import" % (ok, len(CASES))
