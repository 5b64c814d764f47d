"""docs/tutorial.md runs as written: its ```python blocks, in order, in one namespace, in a fresh
directory (a failing block is named by its first line)."""
import os
import re
import subprocess
import sys

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs",
                   "tutorial.md")


def blocks():
    return re.findall(r"^```python\n(.*?)^```", open(DOC).read(), flags=re.S | re.M)


def test_the_tutorial_has_its_sections():
    text = open(DOC).read()
    for what in ("pip install", "frit.jit", "frit.profile", "frit.image.save", "frit.kernel", "frit.grad"):
        assert what in text, what
    assert len(blocks()) >= 6


def test_the_tutorial_runs(tmp_path):
    script = "\n".join(f"# --- block {i}: {b.splitlines()[0]!r}\n{b}" for i, b in enumerate(blocks()))
    (tmp_path / "tutorial.py").write_text(script)
    p = subprocess.run([sys.executable, "tutorial.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert (tmp_path / "mandelbrot.png").exists() and (tmp_path / "softmax_trace.json").exists()
