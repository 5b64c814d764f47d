"""Exceptions of the frit package: FritError carries the C library's message (naming op, shapes
and dtypes); FritTypeError is raised for Python arguments of the wrong type."""


class FritError(ValueError):
    """An error reported by frit (bad shapes, dtypes, axes ...); the message comes from C."""


class FritTypeError(FritError, TypeError):
    """A Python argument of the wrong type (a list where an axis is expected, a complex scalar...)."""


class FritAxisError(FritError, IndexError):
    """An axis out of range: both ValueError and IndexError, as numpy's AxisError (the array API
    standard asks IndexError of expand_dims, numpy code catches either)."""
