"""Executes the ```python blocks of README.md's "Python quickstart" section, in order and in one
namespace, as a user would paste them. The blocks assert their own results (against numpy)."""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(os.path.dirname(os.path.dirname(HERE)), "README.md")


def quickstart_blocks():
    text = open(README).read()
    m = re.search(r"^## Python quickstart\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, "README.md has no '## Python quickstart' section"
    return re.findall(r"^```python\n(.*?)^```", m.group(1), re.S | re.M)


def test_quickstart_has_blocks():
    blocks = quickstart_blocks()
    assert len(blocks) >= 3
    assert any("frit.jit" in b and "step_np" in b for b in blocks)  # the n-body step vs numpy


def test_quickstart_runs(capsys):
    ns = {"__name__": "readme_quickstart"}
    for i, block in enumerate(quickstart_blocks()):
        code = compile(block, "README.md:python-quickstart-block-%d" % (i + 1), "exec")
        exec(code, ns)  # noqa: S102 - the README's own code
    out = capsys.readouterr().out
    assert "bytes of intermediates" in out
