"""The build step of the Python package (pyproject.toml holds the rest): runs the Makefile to
build libfrit.so and puts it inside the package as frit/libfrit.so, and tags the wheel for this
platform (the package is pure Python over ctypes, so any Python 3 on it can load it). The version
is read from include/frit.h, its one source."""
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.errors import PlatformError
except ImportError:
    from distutils.errors import DistutilsPlatformError as PlatformError
try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))


def read_version():
    with open(os.path.join(ROOT, "include", "frit.h")) as f:
        text = f.read()
    parts = [re.search(r"^#define FRIT_VERSION_%s\s+(\d+)" % k, text, re.M) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise RuntimeError("include/frit.h: FRIT_VERSION_MAJOR/MINOR/PATCH not found")
    return ".".join(m.group(1) for m in parts)


def build_library():
    """make the shared library in ROOT/build (the Makefile's build folder, so an existing build
    is reused); returns its path."""
    cc = os.environ.get("CC", "cc")
    missing = [t for t in (cc.split()[0], "make") if not shutil.which(t)]
    if missing:
        # a distutils error: pip shows the message without a traceback
        raise PlatformError(
            "building frit needs a C11 compiler and make (and frit needs the C compiler again at "
            "run time, to compile kernels); not found: %s. Install them, e.g. `apt-get install "
            "build-essential` (Debian, Ubuntu), `dnf install gcc make` (Fedora), `apk add build-base` "
            "(Alpine), or set CC." % ", ".join(missing))
    jobs = os.environ.get("FRIT_BUILD_JOBS") or str(os.cpu_count() or 1)
    subprocess.run(["make", "-j" + jobs, "build/libfrit.so"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "build", "libfrit.so")


class BuildPy(build_py):
    def run(self):
        lib = build_library()
        super().run()
        # an editable install imports python/frit in place, whose _lib finds build/libfrit.so
        if not getattr(self, "editable_mode", False):
            dest = os.path.join(self.build_lib, "frit", "libfrit.so")
            self.copy_file(lib, dest)


class BdistWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # install into platlib: the package holds a shared library
        return True


setup(version=read_version(), cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel},
      distclass=BinaryDistribution)
