#!/bin/sh
# `make install` into a temporary prefix, checked as a C user would use it: the files and the
# soname links are there, pkg-config describes them, examples/pkgconfig/hello.c copied outside the
# tree builds with `cc hello.c $(pkg-config --cflags --libs frit)` against the shared library
# (and again against libfrit.a), runs with the values worked out by hand, the installed CLI runs,
# DESTDIR stages the same tree, and `make uninstall` removes every file.
# Usage: sh tests/test_install.sh [BUILD_DIR]
BUILD=${1:-build}
CC=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/frit-install-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
  fails=$((fails + 1))
  echo "FAIL: $*" >&2
}

# pkg-config is what the test is about: installed here when missing and we may (as for PoCL in
# the Makefile), else the test fails saying so.
if ! command -v pkg-config >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkgconf) >/dev/null 2>&1
  fi
  command -v pkg-config >/dev/null 2>&1 || { echo "FAIL: test_install needs pkg-config (apt-get install pkgconf)" >&2; exit 1; }
fi

ver() { sed -n "s/^#define FRIT_VERSION_$1  *\([0-9][0-9]*\).*/\1/p" include/frit.h; }
major=$(ver MAJOR)
version=$major.$(ver MINOR).$(ver PATCH)
prefix=$tmp/prefix
if ! make -s BUILD="$BUILD" PREFIX="$prefix" install >"$tmp/log" 2>&1; then
  cat "$tmp/log" >&2
  echo "FAIL: make install PREFIX=$prefix" >&2
  exit 1
fi

for f in include/frit.h include/frit_ops.h lib/libfrit.a lib/libfrit.so.$version \
         lib/pkgconfig/frit.pc bin/frit; do
  [ -f "$prefix/$f" ] || fail "make install did not install $f"
done
[ "$(readlink "$prefix/lib/libfrit.so.$major")" = "libfrit.so.$version" ] || fail "libfrit.so.$major is not a link to libfrit.so.$version"
[ "$(readlink "$prefix/lib/libfrit.so")" = "libfrit.so.$major" ] || fail "libfrit.so is not a link to libfrit.so.$major"
soname=$(od -An -c "$prefix/lib/libfrit.so.$version" | tr -d ' \n' | grep -o "libfrit\.so\.$major\\\\0" | head -1)
[ -n "$soname" ] || fail "libfrit.so.$version does not carry the soname libfrit.so.$major"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion frit)" = "$version" ] || fail "pkg-config --modversion frit: $(pkg-config --modversion frit), want $version"
[ "$(pkg-config --variable=libdir frit)" = "$prefix/lib" ] || fail "pkg-config libdir: $(pkg-config --variable=libdir frit)"

# the example, out of the tree, as its comment says to build it
mkdir "$tmp/user" && cp examples/pkgconfig/hello.c "$tmp/user/"
want="frit $version (header $(ver MAJOR).$(ver MINOR).$(ver PATCH))
y = 3 5 7 9
sum = 34"
export FRIT_CACHE_DIR="$tmp/cache"
if (cd "$tmp/user" && $CC hello.c $(pkg-config --cflags --libs frit) -o hello) >"$tmp/log" 2>&1; then
  got=$(cd "$tmp/user" && LD_LIBRARY_PATH="$(pkg-config --variable=libdir frit)" ./hello 2>&1)
  [ "$got" = "$want" ] || fail "hello (shared) printed '$got', want '$want'"
  # it really is the installed shared library that runs
  (cd "$tmp/user" && ./hello) >/dev/null 2>&1 && [ ! -e /usr/lib/libfrit.so.$major ] && \
    [ ! -e /usr/local/lib/libfrit.so.$major ] && fail "hello ran without LD_LIBRARY_PATH: not linked to the installed .so?"
else
  fail "cc hello.c \$(pkg-config --cflags --libs frit): $(cat "$tmp/log")"
fi
if (cd "$tmp/user" && $CC hello.c $(pkg-config --cflags frit) "$prefix/lib/libfrit.a" \
      $(pkg-config --static --libs-only-l frit | sed 's/-lfrit//') -o hello_static) >"$tmp/log" 2>&1; then
  got=$(cd "$tmp/user" && ./hello_static 2>&1)
  [ "$got" = "$want" ] || fail "hello (static) printed '$got', want '$want'"
else
  fail "cc hello.c libfrit.a: $(cat "$tmp/log")"
fi

got=$("$prefix/bin/frit" simplify '(x*4+y)/4 + (x*4+y)%4' --range x=0:16 --range y=0:4 2>&1)
[ "$got" = "x + y" ] || fail "installed frit simplify -> '$got', want 'x + y'"
"$prefix/bin/frit" info | grep -qx "version: $version" || fail "installed frit info does not say version: $version"

# DESTDIR stages the files under it with the paths of PREFIX (frit.pc names PREFIX, not DESTDIR)
make -s BUILD="$BUILD" PREFIX=/opt/frit DESTDIR="$tmp/stage" install >"$tmp/log" 2>&1 || fail "make install DESTDIR: $(cat "$tmp/log")"
[ -f "$tmp/stage/opt/frit/lib/libfrit.so.$version" ] || fail "DESTDIR: no $tmp/stage/opt/frit/lib/libfrit.so.$version"
grep -qx "prefix=/opt/frit" "$tmp/stage/opt/frit/lib/pkgconfig/frit.pc" || fail "DESTDIR: frit.pc does not say prefix=/opt/frit"

make -s BUILD="$BUILD" PREFIX="$prefix" uninstall >"$tmp/log" 2>&1 || fail "make uninstall: $(cat "$tmp/log")"
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"

if [ $fails -ne 0 ]; then
  echo "test_install: $fails failures" >&2
  exit 1
fi
echo "test_install: make install, pkg-config, shared and static hello, DESTDIR, uninstall ok"
