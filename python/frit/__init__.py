"""frit: an optimizing tensor compiler. The Python package proper comes later; for now this
exposes the thin ctypes binding in frit._lib (imported lazily: it loads libfrit.so)."""
