"""Saving and loading named arrays: the safetensors format (read and written here, so weights
move to and from PyTorch and JAX without extra packages) and numpy's .npz, chosen by the file's
extension. A load that fails (a bad file, a missing name, a shape or dtype mismatch) changes
nothing: everything is read and checked before anything is set."""
import json
import struct

import numpy as np

from .._errors import FritError

__all__ = ["save", "load"]

# safetensors dtype names <-> numpy
_ST = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
       "I32": np.int32, "I64": np.int64, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32,
       "U64": np.uint64, "BOOL": np.bool_}
_NP = {np.dtype(v): k for k, v in _ST.items()}


def _is_safetensors(path):
    return str(path).endswith(".safetensors")


def save(path, tensors, metadata=None):
    """Writes {name: array} to path (.safetensors or .npz)."""
    arrays = {k: np.asarray(np.asarray(v), order="C") for k, v in tensors.items()}  # keeps 0-d
    if not _is_safetensors(path):
        if not str(path).endswith(".npz"):
            raise FritError("save: %s: the extension must be .safetensors or .npz" % path)
        np.savez(path, **arrays)
        return
    header, offset = {}, 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for k in sorted(arrays):
        a = arrays[k]
        if a.dtype not in _NP:
            raise FritError("save: %r has dtype %s, which safetensors cannot hold" % (k, a.dtype))
        header[k] = {"dtype": _NP[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for k in sorted(arrays):
            f.write(arrays[k].astype(arrays[k].dtype.newbyteorder("<"), copy=False).tobytes())


def load(path):
    """{name: numpy array} from path (.safetensors or .npz). FritError if the file is not one."""
    if not _is_safetensors(path):
        try:
            with np.load(path, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError) as e:
            raise FritError("load: %s: %s" % (path, e)) from None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise FritError("load: %s: %s" % (path, e)) from None
    bad = FritError("load: %s is not a safetensors file" % path)
    if len(data) < 8:
        raise bad
    n = struct.unpack("<Q", data[:8])[0]
    if n > len(data) - 8:
        raise bad
    try:
        header = json.loads(data[8:8 + n])
    except ValueError:
        raise bad from None
    body = memoryview(data)[8 + n:]
    out = {}
    for k, spec in header.items():
        if k == "__metadata__":
            continue
        try:
            dt = np.dtype(_ST[spec["dtype"]]).newbyteorder("<")
            b, e = spec["data_offsets"]
            shape = tuple(spec["shape"])
        except (KeyError, TypeError, ValueError):
            raise FritError("load: %s: tensor %r has an unsupported or malformed entry" % (path, k)) from None
        count = int(np.prod(shape)) if shape else 1
        if not 0 <= b <= e <= len(body) or e - b != count * dt.itemsize:
            raise FritError("load: %s: tensor %r's data is out of the file or of the wrong size" % (path, k))
        out[k] = np.frombuffer(body[b:e], dt).reshape(shape).astype(dt.newbyteorder("="))
    return out
