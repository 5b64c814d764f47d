"""docs/python-api.md lists the whole public API: every public name of the frit package (its
__all__, else its public attributes), of frit.random, frit.nn, frit.linalg, frit.image and frit.window, every public Array attribute,
and the attributes of jitted functions and Compiled objects."""
import inspect
import os
import re

import numpy as np

import frit

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "python-api.md")


def _doc():
    return open(DOC).read()


def _public(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    return [n for n in names if not inspect.ismodule(getattr(mod, n, None))]


def _listed(doc, prefix, name):
    return re.search(r"`%s%s[`(\[ .]" % (re.escape(prefix), re.escape(name)), doc) is not None


def test_every_package_name_is_documented():
    doc = _doc()
    missing = [n for n in _public(frit) if not _listed(doc, "frit.", n)]
    assert not missing, "not in docs/python-api.md: %s" % missing


def test_submodules_documented():
    doc = _doc()
    missing = []
    for sub in ("random", "nn", "linalg", "image", "window"):
        mod = getattr(frit, sub, None)
        if mod is None:
            continue
        for n in _public(mod):
            if not (_listed(doc, "frit.%s." % sub, n) or _listed(doc, "frit.", n)):
                missing.append("frit.%s.%s" % (sub, n))
    assert not missing, "not in docs/python-api.md: %s" % missing


def test_array_attributes_documented():
    doc = _doc()
    names = [n for n in dir(frit.Array) if not n.startswith("_")]
    missing = [n for n in names if not _listed(doc, "x.", n)]
    assert not missing, "Array attributes not in docs/python-api.md: %s" % missing


def test_jit_objects_documented():
    doc = _doc()
    f = frit.jit(lambda a: a + 1)
    c = f.lower(np.zeros(3))
    missing = [n for n in ("lower", "trace_count", "compile_count", "cc_count", "fallback_count",
                           "clear_cache") if not _listed(doc, "f.", n) or not hasattr(f, n)]
    missing += [n for n in ("kernels", "source", "ir", "required_memory", "dynamic", "info")
                if not _listed(doc, "c.", n) or not hasattr(c, n)]
    assert not missing, missing
