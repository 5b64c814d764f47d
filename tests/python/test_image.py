"""frit.image: the pixels written are read back with Pillow and compared with the mapping worked
out here in numpy (clip, Reinhard, ACES, normalize, gamma, sRGB), for grey, RGB and RGBA, numpy
and frit inputs (eager and jit results); animations keep their frames; bad input names the shape
and dtype."""
import numpy as np
import pytest

import frit

PIL = pytest.importorskip("PIL.Image")


def read(path):
    with PIL.open(path) as im:
        return np.asarray(im)


def ramp(shape, lo=-0.5, hi=1.5):
    return np.linspace(lo, hi, int(np.prod(shape)), dtype=np.float32).reshape(shape)


def u8(t):
    return np.rint(np.clip(t, 0, 1) * 255).astype(np.uint8)


@pytest.mark.parametrize("shape", [(5, 7), (5, 7, 3), (4, 6, 4)])
def test_float_images_are_clipped_and_read_back(shape, tmp_path):
    a = ramp(shape)
    want = u8(a.astype(np.float64))
    if len(shape) == 3 and shape[2] == 4:
        want[..., 3] = u8(a[..., 3].astype(np.float64))
    p = frit.image.save(a, tmp_path / "x.png")
    np.testing.assert_array_equal(read(p), want)


def test_uint8_and_bool_are_written_as_they_are(tmp_path):
    a = np.random.default_rng(0).integers(0, 256, (9, 11, 3)).astype(np.uint8)
    np.testing.assert_array_equal(read(frit.image.save(a, tmp_path / "a.png")), a)
    b = np.random.default_rng(1).random((6, 6)) > 0.5
    np.testing.assert_array_equal(read(frit.image.save(b, tmp_path / "b.png")), np.where(b, 255, 0))


def test_frit_arrays_eager_and_jit(tmp_path):
    x = frit.asarray(ramp((8, 8)))
    eager = x * 0.5 + 0.25
    jitted = frit.jit(lambda v: v * 0.5 + 0.25)(x)
    want = u8(ramp((8, 8)).astype(np.float64) * 0.5 + 0.25)
    np.testing.assert_array_equal(read(frit.image.save(eager, tmp_path / "e.png")), want)
    np.testing.assert_array_equal(read(frit.image.save(jitted, tmp_path / "j.png")), want)


def test_tone_maps_and_gamma():
    x = np.array([[-1.0, 0.0, 0.25, 1.0, 3.0, np.inf, np.nan]], np.float32)
    xd = np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
    r = np.maximum(xd, 0)
    reinhard = np.where(np.isinf(r), 1.0, r / (1 + np.where(np.isinf(r), 0, r)))
    np.testing.assert_array_equal(frit.image.to_uint8(x, "reinhard"), u8(reinhard))
    c = np.clip(xd, 0, 1e6)
    aces = np.clip(c * (2.51 * c + 0.03) / (c * (2.43 * c + 0.59) + 0.14), 0, 1)
    np.testing.assert_array_equal(frit.image.to_uint8(x, "aces"), u8(aces))
    np.testing.assert_array_equal(frit.image.to_uint8(x, exposure=2.0), u8(np.clip(2 * xd, 0, 1)))
    np.testing.assert_array_equal(frit.image.to_uint8(x, gamma=2.2), u8(np.clip(xd, 0, 1) ** (1 / 2.2)))
    t = np.clip(xd, 0, 1)
    srgb = np.where(t <= 0.0031308, 12.92 * t, 1.055 * t ** (1 / 2.4) - 0.055)
    np.testing.assert_array_equal(frit.image.to_uint8(x, gamma="srgb"), u8(srgb))
    ints = np.array([[3, 5, 7, 11]], np.int32)
    np.testing.assert_array_equal(frit.image.to_uint8(ints, "normalize"), u8((ints - 3) / 8.0))
    np.testing.assert_array_equal(frit.image.to_uint8(np.full((2, 2), 4.0), "normalize"), np.zeros((2, 2), np.uint8))


def test_gif_animation_keeps_its_frames(tmp_path):
    frames = [np.full((6, 8), v, np.float32) for v in (0.0, 0.5, 1.0)]
    p = frit.image.save_animation(frames, tmp_path / "a.gif", fps=10)
    with PIL.open(p) as im:
        assert im.n_frames == 3
        got = []
        for i in range(3):
            im.seek(i)
            got.append(int(np.asarray(im.convert("L"))[0, 0]))
    assert got == [0, 128, 255]


@pytest.mark.parametrize("bad, pattern", [
    (np.zeros((4, 4, 2), np.float32), r"shape \(4, 4, 2\)"),
    (np.zeros((2, 3, 4, 5), np.float32), r"shape \(2, 3, 4, 5\)"),
    (np.zeros(7, np.float32), r"shape \(7,\)"),
    (np.zeros((0, 5), np.float32), r"at least one pixel"),
    (np.zeros((3, 3), np.int16), r"int16"),
    (np.zeros((3, 3), np.complex64), r"complex"),
])
def test_bad_images_name_their_shape_and_dtype(bad, pattern, tmp_path):
    with pytest.raises(frit.FritError, match=pattern):
        frit.image.save(bad, tmp_path / "x.png")


def test_bad_options_and_formats(tmp_path):
    a = np.zeros((3, 3), np.float32)
    with pytest.raises(frit.FritError, match="unknown tonemap"):
        frit.image.save(a, tmp_path / "x.png", tonemap="filmic")
    with pytest.raises(frit.FritError, match="gamma"):
        frit.image.save(a, tmp_path / "x.png", gamma=0)
    with pytest.raises(frit.FritError, match="alpha"):
        frit.image.save(np.zeros((3, 3, 4), np.float32), tmp_path / "x.jpg")
    with pytest.raises(frit.FritError, match="cannot write"):
        frit.image.save(a, tmp_path / "x.unknownext")
    with pytest.raises(frit.FritError, match="frame 1 has shape"):
        frit.image.save_animation([a, np.zeros((4, 4), np.float32)], tmp_path / "a.gif")
    with pytest.raises(frit.FritError, match="unsupported format"):
        frit.image.save_animation([a], tmp_path / "a.avi")
    with pytest.raises(frit.FritError, match="no frames"):
        frit.image.save_animation([], tmp_path / "a.gif")
