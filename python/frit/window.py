"""A window that shows an array every frame: `frit.window.Window(w, h)`, then per frame
`win.show(img)`, with keyboard and mouse state and a small immediate-mode UI (text, sliders,
buttons) drawn over the picture. GLFW opens the window and OpenGL shows the frame as a texture
(the `glfw` and `PyOpenGL` packages, imported on first use); the UI is drawn with Pillow.

Without a display (no DISPLAY / WAYLAND_DISPLAY, or GLFW cannot start) the window falls back to
writing its frames as PNG files into `frames_dir` (say so once on stderr), unless fallback=False,
which raises a FritError saying why. The same program then runs on a headless machine.

    with frit.window.Window(256, 256, "fluids", scale=2) as win:
        while win.running:
            strength = win.slider("strength", strength, 0.0, 2.0)
            if win.button("reset"): state = init()
            win.text(f"{fps:.0f} fps")
            win.show(picture(state))

Frames are tone-mapped like frit.image.save (tonemap, exposure, gamma at construction)."""
import os
import sys

import numpy as np

from ._errors import FritError
from .image import to_uint8

__all__ = ["Window", "KEYS"]

# names accepted by key_down / key_pressed, besides single letters and digits
KEYS = ("space", "escape", "enter", "tab", "backspace", "left", "right", "up", "down", "shift", "control")

ROW = 18          # UI row height, in window pixels
PANEL = 220       # UI panel width


_open = 0   # windows open in this process: GLFW is started with the first, ended with the last


def _display_available():
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class Window:
    """width, height: the frame's size in pixels (arrays shown must have it); scale: window
    pixels per frame pixel (nearest-neighbour); frames_dir: where the headless fallback writes
    frame_00000.png, ... (default ./frit_frames); every: write every n-th frame there;
    max_frames: headless only, `running` turns False after that many frames (None: never)."""

    def __init__(self, width, height, title="frit", scale=1, vsync=True, tonemap="clip", exposure=1.0, gamma=1.0,
                 fallback=True, frames_dir=None, every=1, max_frames=None):
        if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
            raise FritError(f"frit.window.Window: width and height must be positive ints, got {width!r}, {height!r}")
        if not (isinstance(scale, int) and scale >= 1):
            raise FritError(f"frit.window.Window: scale must be an int >= 1, got {scale!r}")
        self.width, self.height, self.scale = width, height, scale
        self.tone = dict(tonemap=tonemap, exposure=exposure, gamma=gamma)
        self.frame = 0
        self.headless = False
        self._closed = False
        self._ui = []                   # this frame's widgets: (kind, label, rect, extra)
        self._ui_last = []              # the last shown frame's
        self._mouse = (0.0, 0.0)
        self._buttons = [False, False, False]
        self._clicked = [False, False, False]   # released this frame
        self._pressed_keys = set()
        self._active = None             # the slider being dragged
        self._max_frames = max_frames
        self._every = max(1, int(every))
        why = None if _display_available() else "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
        if why is None:
            why = self._open_gl(title, vsync)
        if why is not None:
            if not fallback:
                raise FritError(f"frit.window.Window: cannot open a window: {why}")
            self.headless = True
            self.frames_dir = frames_dir or os.path.join(os.getcwd(), "frit_frames")
            os.makedirs(self.frames_dir, exist_ok=True)
            print(f"frit.window: {why}; writing frames to {self.frames_dir}", file=sys.stderr)

    # ------------------------------------------------------------------ GLFW and OpenGL

    def _open_gl(self, title, vsync):
        """Opens the GLFW window; the reason it could not, or None."""
        try:
            import glfw
            from OpenGL import GL
        except ImportError as e:
            return f"the glfw and PyOpenGL packages are needed ({e}); pip install glfw PyOpenGL"
        errors = []
        glfw.set_error_callback(lambda code, msg: errors.append(msg.decode() if isinstance(msg, bytes) else str(msg)))
        global _open
        if _open == 0 and not glfw.init():
            return "GLFW could not start" + (f": {errors[-1]}" if errors else "")
        self._glfw, self._gl = glfw, GL
        glfw.window_hint(glfw.RESIZABLE, glfw.FALSE)
        win = glfw.create_window(self.width * self.scale, self.height * self.scale, title, None, None)
        if not win:
            if _open == 0:
                glfw.terminate()
            return "GLFW could not open a window" + (f": {errors[-1]}" if errors else "")
        _open += 1
        self._win = win
        glfw.make_context_current(win)
        glfw.swap_interval(1 if vsync else 0)
        glfw.set_key_callback(win, self._on_key)
        glfw.set_mouse_button_callback(win, self._on_mouse_button)
        glfw.set_cursor_pos_callback(win, self._on_cursor)
        self._tex = GL.glGenTextures(1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._tex)
        for p in (GL.GL_TEXTURE_MIN_FILTER, GL.GL_TEXTURE_MAG_FILTER):
            GL.glTexParameteri(GL.GL_TEXTURE_2D, p, GL.GL_NEAREST)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
        return None

    def _on_key(self, win, key, scancode, action, mods):
        if action == self._glfw.PRESS:
            self._pressed_keys.add(key)
        if key == self._glfw.KEY_ESCAPE and action == self._glfw.PRESS:
            self._glfw.set_window_should_close(win, True)

    def _on_mouse_button(self, win, button, action, mods):
        if 0 <= button < 3:
            down = action == self._glfw.PRESS
            if self._buttons[button] and not down:
                self._clicked[button] = True
            self._buttons[button] = down

    def _on_cursor(self, win, x, y):
        self._mouse = (float(x), float(y))

    def _key_code(self, name):
        g = self._glfw
        if isinstance(name, str) and len(name) == 1 and name.isalnum():
            return getattr(g, "KEY_" + name.upper())
        table = {"space": g.KEY_SPACE, "escape": g.KEY_ESCAPE, "enter": g.KEY_ENTER, "tab": g.KEY_TAB,
                 "backspace": g.KEY_BACKSPACE, "left": g.KEY_LEFT, "right": g.KEY_RIGHT, "up": g.KEY_UP,
                 "down": g.KEY_DOWN, "shift": g.KEY_LEFT_SHIFT, "control": g.KEY_LEFT_CONTROL}
        if name not in table:
            raise FritError(f"frit.window: unknown key {name!r} (a letter, a digit or one of {', '.join(KEYS)})")
        return table[name]

    # ------------------------------------------------------------------ input

    @property
    def running(self):
        """False once the window was closed (its close button, Escape, close()), or in the
        headless fallback after max_frames frames."""
        if self._closed:
            return False
        if self.headless:
            return self._max_frames is None or self.frame < self._max_frames
        return not self._glfw.window_should_close(self._win)

    def key_down(self, name):
        """Is the key held ("a", "7", "space", "left", ...)? Always False headless."""
        if self.headless or self._closed:
            if not (isinstance(name, str) and ((len(name) == 1 and name.isalnum()) or name in KEYS)):
                raise FritError(f"frit.window: unknown key {name!r} (a letter, a digit or one of {', '.join(KEYS)})")
            return False
        return self._glfw.get_key(self._win, self._key_code(name)) == self._glfw.PRESS

    def key_pressed(self, name):
        """Did the key go down since the previous frame?"""
        if self.headless or self._closed:
            return self.key_down(name)
        return self._key_code(name) in self._pressed_keys

    @property
    def mouse(self):
        """The cursor in frame pixels (x right, y down; fractional)."""
        return (self._mouse[0] / self.scale, self._mouse[1] / self.scale)

    def mouse_down(self, button=0):
        """Is the mouse button (0 left, 1 right, 2 middle) held, and not on a UI widget?"""
        return self._buttons[button] and not self._over_ui() and self._active is None

    # ------------------------------------------------------------------ immediate-mode UI

    def _next_rect(self):
        y = 4 + ROW * len(self._ui)
        return (4, y, 4 + PANEL, y + ROW - 2)

    def _over_ui(self):
        """Is the cursor on a widget of this frame or of the last one shown?"""
        x, y = self._mouse
        return any(r[0] <= x < r[2] and r[1] <= y < r[3] for _, _, r, _ in self._ui + self._ui_last)

    def _hit(self, rect):
        x, y = self._mouse
        return rect[0] <= x < rect[2] and rect[1] <= y < rect[3]

    def text(self, s):
        """A line of text in the UI panel, this frame."""
        self._ui.append(("text", str(s), self._next_rect(), None))

    def slider(self, label, value, lo, hi):
        """A slider for value in [lo, hi]; returns the value after this frame's dragging."""
        if not hi > lo:
            raise FritError(f"frit.window.slider {label!r}: needs lo < hi, got {lo!r}, {hi!r}")
        rect = self._next_rect()
        if self._buttons[0] and (self._active == label or (self._active is None and self._hit(rect))):
            self._active = label
            t = (self._mouse[0] - rect[0]) / (rect[2] - rect[0])
            value = lo + min(max(t, 0.0), 1.0) * (hi - lo)
        elif not self._buttons[0] and self._active == label:
            self._active = None
        value = float(value)
        self._ui.append(("slider", str(label), rect, (float(value), float(lo), float(hi))))
        return value

    def button(self, label):
        """A button; True on the frame it was clicked (released over it)."""
        rect = self._next_rect()
        clicked = self._clicked[0] and self._hit(rect)
        self._ui.append(("button", str(label), rect, self._buttons[0] and self._hit(rect)))
        return clicked

    def _draw_ui(self, img):
        """The panel over img (uint8, window size, RGB), through Pillow's default font."""
        if not self._ui:
            return img
        from PIL import Image, ImageDraw
        im = Image.fromarray(img)
        d = ImageDraw.Draw(im, "RGBA")
        for kind, label, (x0, y0, x1, y1), extra in self._ui:
            if kind == "text":
                d.rectangle((x0, y0, x1, y1), fill=(0, 0, 0, 110))
                d.text((x0 + 4, y0 + 2), label, fill=(255, 255, 255, 255))
            elif kind == "slider":
                v, lo, hi = extra
                d.rectangle((x0, y0, x1, y1), fill=(30, 30, 40, 170))
                fx = x0 + int((x1 - x0) * (v - lo) / (hi - lo))
                d.rectangle((x0, y0, fx, y1), fill=(70, 110, 200, 210))
                d.text((x0 + 4, y0 + 2), f"{label}: {v:.4g}", fill=(255, 255, 255, 255))
            else:
                d.rectangle((x0, y0, x1, y1), fill=(120, 120, 140, 230) if extra else (60, 60, 80, 200),
                            outline=(200, 200, 220, 255))
                d.text((x0 + 4, y0 + 2), label, fill=(255, 255, 255, 255))
        return np.asarray(im)

    # ------------------------------------------------------------------ frames

    def compose(self, img):
        """The frame as shown: img tone-mapped to 8-bit RGB, scaled up, the UI drawn over it
        (numpy uint8, (height*scale, width*scale, 3))."""
        u8 = to_uint8(img, what="frit.window.show", **self.tone)
        if u8.shape[:2] != (self.height, self.width):
            raise FritError(f"frit.window.show: the window is {self.height}x{self.width} (rows x columns), "
                            f"the array has shape {u8.shape}")
        if u8.ndim == 2:
            u8 = np.repeat(u8[..., None], 3, axis=-1)
        elif u8.shape[2] == 1:
            u8 = np.repeat(u8, 3, axis=-1)
        elif u8.shape[2] == 4:
            u8 = u8[..., :3]
        if self.scale > 1:
            u8 = np.repeat(np.repeat(u8, self.scale, axis=0), self.scale, axis=1)
        return self._draw_ui(np.ascontiguousarray(u8))

    def show(self, img):
        """Shows img (frit or numpy; (H, W), (H, W, 3) or (H, W, 4)) as this frame, with the UI
        calls made since the previous frame, then reads the input for the next one."""
        if self._closed:
            raise FritError("frit.window.show: the window is closed")
        rgb = self.compose(img)
        self._last = rgb
        if self.headless:
            if self.frame % self._every == 0:
                from .image import save
                save(rgb, os.path.join(self.frames_dir, f"frame_{self.frame:05d}.png"))
        else:
            self._draw(rgb)
        self.frame += 1
        self._ui_last, self._ui = self._ui, []
        self._clicked = [False, False, False]
        self._pressed_keys = set()
        if not self.headless:
            self._glfw.poll_events()

    def _draw(self, rgb):
        GL, glfw = self._gl, self._glfw
        glfw.make_context_current(self._win)   # another window may have drawn last
        h, w = rgb.shape[:2]
        fw, fh = glfw.get_framebuffer_size(self._win)
        GL.glViewport(0, 0, fw, fh)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT)
        GL.glEnable(GL.GL_TEXTURE_2D)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._tex)
        GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_RGB8, w, h, 0, GL.GL_RGB, GL.GL_UNSIGNED_BYTE, rgb)
        GL.glBegin(GL.GL_QUADS)
        for tx, ty, vx, vy in ((0, 1, -1, -1), (1, 1, 1, -1), (1, 0, 1, 1), (0, 0, -1, 1)):
            GL.glTexCoord2f(tx, ty)   # texture row 0 is the image's top row
            GL.glVertex2f(vx, vy)
        GL.glEnd()
        GL.glFinish()
        self._shot = self._read_back()
        glfw.swap_buffers(self._win)

    def _read_back(self):
        GL = self._gl
        self._glfw.make_context_current(self._win)
        fw, fh = self._glfw.get_framebuffer_size(self._win)
        GL.glReadBuffer(GL.GL_BACK)
        data = GL.glReadPixels(0, 0, fw, fh, GL.GL_RGB, GL.GL_UNSIGNED_BYTE)
        return np.frombuffer(data, np.uint8).reshape(fh, fw, 3)[::-1].copy()

    def screenshot(self):
        """The last frame as the window drew it (uint8 RGB, read back from OpenGL), or as
        composed when headless."""
        if self.frame == 0:
            raise FritError("frit.window.screenshot: nothing shown yet")
        return self._last.copy() if self.headless else self._shot.copy()

    def close(self):
        if self._closed:
            return
        self._closed = True
        if not self.headless:
            global _open
            self._glfw.destroy_window(self._win)
            _open -= 1
            if _open == 0:
                self._glfw.terminate()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
