"""frit.nn: neural-network functions (the same functions as frit.softmax, frit.conv2d ...)."""
from ._ops import (relu, gelu, sigmoid, softmax, log_softmax, logsumexp, conv2d,  # noqa: F401
                   max_pool2d, avg_pool2d, one_hot)
