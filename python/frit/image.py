"""Pictures from arrays: `frit.image.save(a, "x.png")` for (H, W), (H, W, 3) and (H, W, 4) arrays,
float (tone-mapped to 8 bits) or uint8 (written as is), and `frit.image.save_animation(frames,
"x.gif")` for a sequence of frames (GIF through Pillow; MP4 through imageio with its ffmpeg
plugin). Pillow is imported on first use, so `import frit` does not need it.

Float images: the value v of a channel becomes round(255 * g(t(exposure * v))), where t is the
tone map and g the transfer curve:
  tonemap "clip" (default): t(x) = clamp(x, 0, 1)
          "reinhard":       t(x) = x / (1 + x) for x >= 0 (negative values 0)
          "aces":           Narkowicz's fit of the ACES filmic curve, clamped to [0, 1]
          "normalize":      (x - min) / (max - min) over the whole image (0 where max == min)
  gamma   1.0 (default): g(t) = t;  a number: t ** (1 / gamma);  "srgb": the sRGB transfer curve.
NaN becomes 0 and +-inf the ends of the range. Alpha channels are clamped, never tone-mapped or
gamma-corrected. bool images are 0 or 255."""
import numbers
import os

import numpy as np

from ._errors import FritError, FritTypeError

__all__ = ["save", "save_animation", "to_uint8", "TONEMAPS"]

TONEMAPS = ("clip", "reinhard", "aces", "normalize")


def _numpy(a):
    """numpy view of a frit Array (realised), a numpy array, or anything np.asarray takes."""
    return np.asarray(a)


def _check_shape(a, what):
    if a.ndim == 2 or (a.ndim == 3 and a.shape[2] in (1, 3, 4)):
        if a.shape[0] == 0 or a.shape[1] == 0:
            raise FritError(f"{what}: an image needs at least one pixel, got shape {a.shape}")
        return
    raise FritError(f"{what}: an image has shape (H, W), (H, W, 3) or (H, W, 4), got shape {a.shape} "
                    f"({a.dtype})")


def _aces(x):
    return np.clip((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0)


def _srgb(t):
    return np.where(t <= 0.0031308, 12.92 * t, 1.055 * np.power(t, 1 / 2.4) - 0.055)


def to_uint8(a, tonemap="clip", exposure=1.0, gamma=1.0, what="frit.image.to_uint8"):
    """The 8-bit image save() writes, as a numpy uint8 array of the same shape (docstring of the
    module for the float mapping)."""
    a = _numpy(a)
    _check_shape(a, what)
    if a.dtype == np.uint8:
        return np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return np.where(a, np.uint8(255), np.uint8(0))
    if a.dtype.kind == "c":
        raise FritTypeError(f"{what}: complex images are not supported (shape {a.shape}, {a.dtype}); "
                            "save abs(a) or a.real")
    if a.dtype.kind in "iu" and tonemap != "normalize":
        raise FritTypeError(f"{what}: integer images other than uint8 need tonemap='normalize' "
                            f"(shape {a.shape}, {a.dtype})")
    if a.dtype.kind not in "fiu":
        raise FritTypeError(f"{what}: unsupported dtype {a.dtype} (shape {a.shape})")
    if tonemap not in TONEMAPS:
        raise FritError(f"{what}: unknown tonemap {tonemap!r} (one of {', '.join(TONEMAPS)})")
    if not (gamma == "srgb" or (isinstance(gamma, numbers.Real) and gamma > 0)):
        raise FritError(f"{what}: gamma must be a positive number or 'srgb', got {gamma!r}")
    x = a.astype(np.float64)
    alpha = None
    if x.ndim == 3 and x.shape[2] == 4:
        x, alpha = x[..., :3], np.clip(np.nan_to_num(x[..., 3], nan=0.0), 0.0, 1.0)
    x = np.nan_to_num(x * float(exposure), nan=0.0, posinf=np.inf, neginf=-np.inf)
    if tonemap == "normalize":
        fin = x[np.isfinite(x)]
        lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 0.0)
        t = (np.clip(x, lo, hi) - lo) / (hi - lo) if hi > lo else np.zeros_like(x)
    elif tonemap == "reinhard":
        x = np.maximum(x, 0.0)
        t = np.where(np.isinf(x), 1.0, x / (1.0 + np.where(np.isinf(x), 0.0, x)))
    elif tonemap == "aces":
        x = np.clip(x, 0.0, 1e6)
        t = _aces(x)
    else:
        t = np.clip(x, 0.0, 1.0)
    t = np.clip(t, 0.0, 1.0)
    if gamma == "srgb":
        t = _srgb(t)
    elif gamma != 1.0:
        t = np.power(t, 1.0 / float(gamma))
    if alpha is not None:
        t = np.concatenate([t, alpha[..., None]], axis=-1)
    return np.rint(t * 255.0).astype(np.uint8)


def _pil():
    try:
        from PIL import Image
    except ImportError as e:
        raise FritError("frit.image needs Pillow: pip install Pillow") from e
    return Image


def _pil_image(u8):
    """Pillow image of a uint8 array: (H, W) or (H, W, 1) grey, (H, W, 3) RGB, (H, W, 4) RGBA."""
    Image = _pil()
    if u8.ndim == 3 and u8.shape[2] == 1:
        u8 = u8[..., 0]
    return Image.fromarray(np.ascontiguousarray(u8))


def save(a, path, tonemap="clip", exposure=1.0, gamma=1.0):
    """Writes the array a (frit or numpy) as an image file; the format comes from the extension
    (.png, .jpg, .bmp, .tif, ... as Pillow knows them). Returns path."""
    u8 = to_uint8(a, tonemap, exposure, gamma, what="frit.image.save")
    img = _pil_image(u8)
    ext = os.path.splitext(str(path))[1].lower()
    if ext in (".jpg", ".jpeg") and img.mode == "RGBA":
        raise FritError(f"frit.image.save: JPEG has no alpha channel (shape {u8.shape}); save as .png")
    try:
        img.save(path)
    except (KeyError, ValueError) as e:
        raise FritError(f"frit.image.save: cannot write {path!r}: {e}") from e
    return path


def save_animation(frames, path, fps=30, loop=0, tonemap="clip", exposure=1.0, gamma=1.0):
    """Writes frames (a sequence of images of one shape, or an array (T, H, W[, C])) as an
    animation: .gif through Pillow (each frame on its own 256-colour palette; loop=0 repeats
    forever), .mp4 through imageio's ffmpeg plugin (pip install imageio imageio-ffmpeg). With
    tonemap='normalize' the range is that of each frame. Returns path."""
    frames = list(frames)
    if not frames:
        raise FritError("frit.image.save_animation: no frames")
    u8 = [to_uint8(f, tonemap, exposure, gamma, what="frit.image.save_animation") for f in frames]
    shape = u8[0].shape
    for i, f in enumerate(u8):
        if f.shape != shape:
            raise FritError(f"frit.image.save_animation: frame {i} has shape {f.shape}, frame 0 {shape}")
    if not (isinstance(fps, numbers.Real) and fps > 0):
        raise FritError(f"frit.image.save_animation: fps must be positive, got {fps!r}")
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".gif":
        imgs = [_pil_image(f) for f in u8]
        imgs[0].save(path, save_all=True, append_images=imgs[1:], duration=max(1, round(1000 / fps)), loop=loop)
        return path
    if ext in (".mp4", ".mov", ".mkv", ".webm"):
        try:
            import imageio.v3 as iio
        except ImportError as e:
            raise FritError(f"frit.image.save_animation: {ext} needs imageio and its ffmpeg plugin: "
                            "pip install imageio imageio-ffmpeg (or write a .gif)") from e
        rgb = [np.repeat(f[..., None], 3, -1) if f.ndim == 2 else f[..., :3] for f in u8]
        iio.imwrite(path, np.stack(rgb), fps=fps, extension=ext)
        return path
    raise FritError(f"frit.image.save_animation: unsupported format {ext or path!r} (.gif, .mp4)")
