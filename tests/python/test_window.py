"""frit.window under Xvfb: the frame OpenGL drew (read back with glReadPixels) is the array as
tone-mapped and scaled; the UI reacts to mouse and keys (fed through the GLFW callbacks, as the
event loop would); without a display the window writes its frames as PNG files, or says why it
cannot open. CI installs Xvfb (make window-deps) and sets FRIT_REQUIRE_WINDOW=1, so a missing
Xvfb fails there instead of skipping."""
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import frit

REQUIRE = os.environ.get("FRIT_REQUIRE_WINDOW") == "1"


def _need(ok, why):
    if not ok:
        if REQUIRE:
            pytest.fail(why + " (FRIT_REQUIRE_WINDOW=1)")
        pytest.skip(why)


def _start_xvfb(xvfb):
    """A private Xvfb on a free display number (the xdist workers each start one: a number is
    tried, and the next one if its server exits or never opens its socket); (process, ":N")."""
    import glfw
    tried = 0
    for n in range(100 + os.getpid() % 400, 1000):
        if os.path.exists("/tmp/.X%d-lock" % n) or os.path.exists("/tmp/.X11-unix/X%d" % n):
            continue
        tried += 1
        if tried > 5:        # a server that starts but never answers GLFW: not a number problem
            break
        proc = subprocess.Popen([xvfb, ":%d" % n, "-screen", "0", "640x480x24", "-nolisten", "tcp", "-ac"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while proc.poll() is None and time.time() < deadline:
            if os.path.exists("/tmp/.X11-unix/X%d" % n):
                os.environ["DISPLAY"] = ":%d" % n
                if glfw.init():          # the server answers
                    glfw.terminate()
                    return proc, ":%d" % n
            time.sleep(0.05)
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
    pytest.fail("Xvfb started on 5 display numbers, GLFW could open none")


@pytest.fixture(scope="module")
def display():
    """A private Xvfb for this module (a session's own display is not relied on: it may be gone)."""
    _need(_importable("glfw") and _importable("OpenGL"), "glfw and PyOpenGL are not installed")
    xvfb = shutil.which("Xvfb")
    _need(xvfb is not None, "Xvfb is not installed")
    old = os.environ.get("DISPLAY")
    proc, name = _start_xvfb(xvfb)
    try:
        yield name
    finally:
        if old is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = old
        proc.terminate()
        proc.wait(10)


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _gradient(h, w, c):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    chans = [x / (w - 1), y / (h - 1), 1 - x / (w - 1), 0.5 + 0 * x][:c]
    return np.stack(chans, -1) if c > 1 else chans[0]


@pytest.mark.parametrize("c, scale", [(1, 1), (3, 2), (4, 3)])
def test_the_window_draws_the_array(display, c, scale):
    img = _gradient(30, 40, c)
    with frit.window.Window(40, 30, "test", scale=scale, vsync=False, fallback=False) as win:
        assert not win.headless
        win.show(img)
        shot = win.screenshot()
    u8 = frit.image.to_uint8(img)
    want = np.repeat(u8[..., None], 3, -1) if c == 1 else u8[..., :3]
    want = np.repeat(np.repeat(want, scale, 0), scale, 1)
    np.testing.assert_array_equal(shot, want)


def test_frit_arrays_and_tone_mapping(display):
    x = frit.asarray(_gradient(16, 16, 3)) * 4.0     # a lazy frit array, values up to 4
    with frit.window.Window(16, 16, vsync=False, fallback=False, tonemap="reinhard") as win:
        win.show(x)
        np.testing.assert_array_equal(win.screenshot(), frit.image.to_uint8(np.asarray(x), "reinhard"))


def test_ui_follows_the_mouse_and_keys(display):
    import glfw
    img = np.zeros((120, 240), np.float32)
    with frit.window.Window(240, 120, vsync=False, fallback=False) as win:
        v = win.slider("speed", 0.5, 0.0, 1.0)
        assert v == 0.5
        assert not win.button("go")
        win.text("hello")
        win.show(img)
        shot = win.screenshot()
        assert shot[:60, :224].any() and not shot[70:, :].any()   # the panel, over a black frame
        # drag the slider (row 0, x from 4 to 224) to three quarters
        win._on_cursor(None, 4 + 0.75 * 220, 10)
        win._on_mouse_button(None, 0, glfw.PRESS, 0)
        assert not win.mouse_down(0)            # over the UI: not the scene's click
        v = win.slider("speed", v, 0.0, 1.0)
        assert abs(v - 0.75) < 0.01
        win.button("go")
        win.show(img)
        # release over the button (row 1): clicked on that frame only
        win._on_cursor(None, 50, 4 + 18 + 5)
        win._on_mouse_button(None, 0, glfw.RELEASE, 0)
        win.slider("speed", v, 0.0, 1.0)
        assert win.button("go")
        win.show(img)
        win.slider("speed", v, 0.0, 1.0)
        assert not win.button("go")
        win.show(img)
        # the scene's mouse, in frame pixels
        win._on_cursor(None, 200, 100)
        win._on_mouse_button(None, 1, glfw.PRESS, 0)
        assert win.mouse == (200.0, 100.0) and win.mouse_down(1)
        # keys: pressed this frame, then not
        win._on_key(win._win, glfw.KEY_A, 0, glfw.PRESS, 0)
        assert win.key_pressed("a") and not win.key_pressed("b")
        win.show(img)
        assert not win.key_pressed("a")
        with pytest.raises(frit.FritError, match="unknown key"):
            win.key_down("hyper")
        assert win.running
        win._on_key(win._win, glfw.KEY_ESCAPE, 0, glfw.PRESS, 0)
        assert not win.running


def test_two_windows_at_once(display):
    a_img, b_img = _gradient(12, 16, 3), 1 - _gradient(10, 14, 3)
    a = frit.window.Window(16, 12, "a", vsync=False, fallback=False)
    b = frit.window.Window(14, 10, "b", vsync=False, fallback=False)
    a.show(a_img)
    b.show(b_img)
    a.show(a_img)
    np.testing.assert_array_equal(a.screenshot(), frit.image.to_uint8(a_img))
    b.close()                                    # the other window keeps working
    a.show(a_img * 0.5)
    np.testing.assert_array_equal(a.screenshot(), frit.image.to_uint8(a_img * 0.5))
    a.close()
    with frit.window.Window(4, 4, vsync=False, fallback=False) as c:   # GLFW starts again
        c.show(np.ones((4, 4), np.float32))
        assert c.screenshot().min() == 255


def test_bad_frames_and_arguments(display):
    with frit.window.Window(8, 6, vsync=False, fallback=False) as win:
        with pytest.raises(frit.FritError, match=r"6x8.*shape \(8, 6\)"):
            win.show(np.zeros((8, 6), np.float32))
        with pytest.raises(frit.FritError, match="nothing shown"):
            win.screenshot()
        with pytest.raises(frit.FritError, match="lo < hi"):
            win.slider("s", 1.0, 2.0, 2.0)
    with pytest.raises(frit.FritError, match="closed"):
        win.show(np.zeros((6, 8), np.float32))
    with pytest.raises(frit.FritError, match="width and height"):
        frit.window.Window(0, 5)


HEADLESS = r"""
import os, sys, numpy as np, frit
img = np.linspace(0, 1, 30 * 40, dtype=np.float32).reshape(40, 30)
try:
    frit.window.Window(30, 40, fallback=False)
    print("opened")
except frit.FritError as e:
    print("error:", e)
win = frit.window.Window(30, 40, frames_dir=sys.argv[1], every=2, max_frames=5)
n = 0
while win.running:
    win.text("t")
    win.show(img * (n + 1) / 5)
    n += 1
print("frames", n, win.headless)
"""


def test_headless_machines_write_frames(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    p = subprocess.run([sys.executable, "-c", HEADLESS, str(tmp_path)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "error: frit.window.Window: cannot open a window: no display" in p.stdout
    assert "frames 5 True" in p.stdout
    assert "writing frames to" in p.stderr
    files = sorted(os.listdir(tmp_path))
    assert files == ["frame_00000.png", "frame_00002.png", "frame_00004.png"]
    from PIL import Image
    with Image.open(tmp_path / "frame_00004.png") as im:
        got = np.asarray(im)
    img = np.linspace(0, 1, 30 * 40, dtype=np.float32).reshape(40, 30)
    plain = np.repeat(frit.image.to_uint8(img)[..., None], 3, -1)
    assert got.shape == (40, 30, 3)
    assert (got[:22] != plain[:22]).any()                  # the UI's text row is drawn over the frame
    np.testing.assert_array_equal(got[24:], plain[24:])    # below the panel: the frame itself
