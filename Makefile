# Build of libfrit (static and shared), the frit CLI, tests and benchmarks.
# make            library + CLI            make test       unit tests + fast fuzz + CLI tests
# make asan       tests under ASan+UBSan   make check      what CI runs (test, pytest, asan, tsan; -Werror)
# make tsan       threaded tests under ThreadSanitizer
# make demo       build and run the demo   make fuzz-long  the long differential fuzz
# make fuzz-numpy the long numpy-oracle fuzz (FRIT_FUZZ_NUMPY_SECONDS, default 1800)
# make fuzz-import  the long fuzz of the StableHLO and ONNX importers (fuzz-import-short: 20 s each, in check)
# make fashion-mnist  installs Debian's dataset-fashion-mnist (root) and trains the MLP and the CNN
# make conformance  the public array API suite (docs/conformance.md; not in CI)
# make install    headers, libfrit.so (versioned, with soname) and .a, the CLI, frit.pc under
#                 PREFIX (/usr/local; DESTDIR honoured)      make uninstall  removes them
# make wheel-check  python -m build, the wheel installed in a fresh venv, used from /tmp (not in CI)
CC ?= cc
BUILD ?= build
OPT ?= -O2 -g
WERROR ?=
SAN ?=
CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wswitch-enum -Wshadow \
  $(if $(WERROR),-Werror) $(OPT) $(SAN) -fPIC -Iinclude -Isrc -I$(BUILD)/gen -MMD -MP $(CFLAGS)
# The ONNX importer needs protobuf-c (its library and protoc-c, which compiles the schema at build
# time); without them its sources are left out and frit_import_onnx reports how to get them.
HAVE_PROTOBUF_C ?= $(if $(and $(wildcard /usr/include/protobuf-c/protobuf-c.h),$(shell command -v protoc-c)),1)
ONNX_LIBS := $(if $(HAVE_PROTOBUF_C),-lprotobuf-c)
LDLIBS_ALL = -lm -ldl -lpthread $(ONNX_LIBS) $(LDLIBS)

# The version lives in include/frit.h only (FRIT_VERSION_MAJOR/MINOR/PATCH).
version_part = $(shell sed -n 's/^[#]define FRIT_VERSION_$(1)  *\([0-9][0-9]*\).*/\1/p' include/frit.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME := libfrit.so.$(VERSION_MAJOR)

# with protobuf-c the importer (onnx/) is built, without it the stub that says how to get it
# (chosen by source, not by a flag, so that a build made before protobuf-c was installed relinks)
LIB_SRCS := $(sort $(filter-out src/cli/% $(if $(HAVE_PROTOBUF_C),src/import/onnx_none.c,src/import/onnx/%),$(wildcard src/*/*.c src/*/*/*.c)))
ONNX_GEN := $(BUILD)/gen/onnx/onnx_subset.pb-c
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
RULES := $(sort $(wildcard src/*/*.rules))
RULE_INCS := $(patsubst src/%.rules,$(BUILD)/gen/%.rules.inc,$(RULES))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
BENCH_SRCS := $(sort $(wildcard bench/bench_*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(if $(HAVE_PROTOBUF_C),$(ONNX_GEN).o)
CLI_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))

.PHONY: install uninstall test-install wheel-check
.PHONY: onnx-deps fuzz-import fuzz-import-short
.PHONY: all check test mathlib-full pytest conformance fuzz-programs fuzz-numpy asan tsan fuzz-long bench clean demo examples fashion-mnist pytest-opencl opencl-driver window-deps
all: $(BUILD)/libfrit.a $(BUILD)/libfrit.so $(BUILD)/frit

$(BUILD)/gen/%.rules.inc: src/%.rules
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@
# kept: as deleted intermediates they would make every later `make` recompile their users
.SECONDARY: $(RULE_INCS)

$(BUILD)/obj/%.o: %.c | $(RULE_INCS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# The generated protobuf-c code is compiled without -Werror: its warnings are not ours to fix.
$(ONNX_GEN).c $(ONNX_GEN).h: src/import/onnx/onnx_subset.proto
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(BUILD)/gen/onnx -Isrc/import/onnx $<
$(ONNX_GEN).o: $(ONNX_GEN).c
	$(CC) -std=c11 $(OPT) $(SAN) -fPIC -w -c $< -o $@
$(BUILD)/obj/src/import/onnx/%.o: src/import/onnx/%.c $(ONNX_GEN).h | $(RULE_INCS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(BUILD)/gen/onnx -c $< -o $@

$(BUILD)/libfrit.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libfrit.so: $(LIB_OBJS)
	$(CC) $(SAN) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/frit: $(CLI_OBJS) $(BUILD)/libfrit.a
	$(CC) $(SAN) -o $@ $(CLI_OBJS) $(BUILD)/libfrit.a $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c tests/check.h $(BUILD)/libfrit.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libfrit.a $(LDLIBS_ALL)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libfrit.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libfrit.a $(LDLIBS_ALL)

examples: $(EXAMPLE_BINS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libfrit.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libfrit.a $(LDLIBS_ALL)

# Tests run from the repository root; FRIT_FUZZ_N sets the fast fuzz size.
test: all $(TEST_BINS)
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; $$t; done; sh tests/test_cli.sh $(BUILD); \
	  $(if $(SAN),,sh tests/test_install.sh $(BUILD);) echo "all tests passed"

# `make install` into a temporary prefix, then a C program outside the tree built with pkg-config
# against it (shared and static) and run. In `make test` (not under the sanitizers: the installed
# library is the plain one).
test-install: all
	sh tests/test_install.sh $(BUILD)

# ---------------------------------------------------------------- install
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL ?= install
HEADERS := $(sort $(wildcard include/frit*.h))

$(BUILD)/frit.pc: frit.pc.in include/frit.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	  -e 's|@VERSION@|$(VERSION)|g' -e 's|@ONNX_LIBS@|$(ONNX_LIBS)|g' frit.pc.in > $@

# Remade on every install (phony), so it always names the PREFIX given to this one.
.PHONY: $(BUILD)/frit.pc
install: all $(BUILD)/frit.pc
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 755 $(BUILD)/libfrit.so $(DESTDIR)$(LIBDIR)/libfrit.so.$(VERSION)
	ln -sf libfrit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libfrit.so
	$(INSTALL) -m 644 $(BUILD)/libfrit.a $(DESTDIR)$(LIBDIR)/libfrit.a
	$(INSTALL) -m 755 $(BUILD)/frit $(DESTDIR)$(BINDIR)/frit
	$(INSTALL) -m 644 $(BUILD)/frit.pc $(DESTDIR)$(PKGCONFIGDIR)/frit.pc
	@# the dynamic linker finds a new library in a system directory only after ldconfig
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1 && \
	  case "$(LIBDIR)" in /usr/lib|/usr/local/lib|/usr/lib64|/usr/local/lib64) true;; *) false;; esac; then ldconfig; fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(HEADERS))) \
	  $(DESTDIR)$(LIBDIR)/libfrit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libfrit.so \
	  $(DESTDIR)$(LIBDIR)/libfrit.a $(DESTDIR)$(BINDIR)/frit $(DESTDIR)$(PKGCONFIGDIR)/frit.pc

# The Python wheel as a user makes it (python -m build: sdist, then a wheel from it, with build
# isolation, so it needs PyPI), installed with numpy in a fresh venv and used from /tmp.
wheel-check:
	sh tests/test_wheel.sh

# Exhaustive accuracy sweep of the C backend's f32 math functions (all 2^32 inputs each, 2^32
# pow pairs; about 1-2 minutes per function on one core; not in CI). FNS=sin,pow limits it.
mathlib-full: $(BUILD)/tests/test_mathlib
	FRIT_MATHLIB_STRIDE=1 FRIT_MATHLIB_FNS=$(FNS) $(BUILD)/tests/test_mathlib

# The ASan pass runs a smaller fuzz batch: the full fast batch already ran in the plain build.
# The MPI layer's test runs there too, on 2 ranks, without leak checking: Open MPI keeps what it
# allocates at init until the process ends.
ASAN_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
asan:
	FRIT_FUZZ_N=$${FRIT_FUZZ_N:-20000} $(MAKE) BUILD=build-asan OPT="-O1 -g" SAN="$(ASAN_SAN)" test
	ASAN_OPTIONS=detect_leaks=0 $(MAKE) BUILD=build-asan OPT="-O1 -g" SAN="$(ASAN_SAN)" test-mpi

# The threaded C tests under ThreadSanitizer (no suppressions). Generated kernels are built
# without it (they only touch their own chunk of the buffers); the pool that runs them is.
# WERROR is off here: the plain build already makes warnings errors, and gcc's -O1 under TSan
# adds false maybe-uninitialized ones.
TSAN_TESTS ?= test_threads
tsan:
	$(MAKE) BUILD=build-tsan WERROR= OPT="-O1 -g" SAN="-fsanitize=thread -fno-omit-frame-pointer" \
	  $(patsubst %,build-tsan/tests/%,$(TSAN_TESTS))
	@set -e; for t in $(TSAN_TESTS); do echo "== build-tsan/tests/$$t"; \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $$TSAN_OPTIONS" build-tsan/tests/$$t; done

# Everything CI runs: warnings as errors, the tests, then the tests again under ASan+UBSan and
# the threaded ones under TSan.
check: opencl-driver window-deps onnx-deps mpi-deps
	FRIT_REQUIRE_OPENCL=1 $(MAKE) WERROR=1 test
	$(MAKE) WERROR=1 test-mpi
	FRIT_REQUIRE_WINDOW=1 FRIT_REQUIRE_MPI=1 $(MAKE) WERROR=1 pytest
	$(MAKE) WERROR=1 pytest-opencl
	$(MAKE) WERROR=1 asan
	$(MAKE) WERROR=1 tsan
	$(MAKE) WERROR=1 fuzz-import-short

fuzz-long: all $(BUILD)/tests/test_fuzz_simplify
	FRIT_FUZZ_N=$${FRIT_FUZZ_N:-5000000} $(BUILD)/tests/test_fuzz_simplify

# Python tests (numpy is the oracle) in a venv the target makes; FRIT_LIB points at the library.
VENV ?= $(BUILD)/venv
# pytest-xdist: the Python tests run in 2 worker processes (each with its own kernel cache dir)
PYTEST_WORKERS ?= -n 2
# PyTorch for frit.torch's tests (tests/python/requirements-torch.txt, --no-deps): the wheel and the
# CUDA runtime libraries its import loads, without triton and the rest (see the file)
pytest: all
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r tests/python/requirements.txt
	$(VENV)/bin/python -m pip install -q --no-deps -r tests/python/requirements-torch.txt
	FRIT_LIB=$(abspath $(BUILD)/libfrit.so) $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_WORKERS) --durations=25 $(PYTEST_ARGS) tests/python
	$(MAKE) pytest-specialise

# The size-specialised kernel variants (src/runtime/specialize.c) only serve large work, which
# the tests' small arrays never reach: FRIT_SPECIALISE=always compiles every kernel's variant.
# CI runs the numpy fuzzer's fast pass and a 1/16 sample of the op matrix's compiled modes (the rows
# whose id hashes to 5 mod 16) so;
# SPECIALISE_SAMPLE=0/1 runs the whole matrix (about 30 minutes).
SPECIALISE_SAMPLE ?= 5/16
pytest-specialise: all
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r tests/python/requirements.txt
	FRIT_SPECIALISE=always FRIT_MATRIX_SAMPLE=$(SPECIALISE_SAMPLE) FRIT_LIB=$(abspath $(BUILD)/libfrit.so) \
	  $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_WORKERS) tests/python/test_fuzz_numpy.py \
	  tests/python/test_op_matrix.py -k "test_matrix and not interp and not test_matrix_size"

# The device backends without a GPU: OpenCL on PoCL (Debian's pocl-opencl-icd, installed here
# when no OpenCL driver is present and we are root) runs the device tests, the explicit-kernel and
# host-loop tests in their jit modes, the shader-like examples, a training step, the math
# functions' 1-ulp checks and a 1/40 sample of the op matrix's compiled modes (FRIT_DEVICE=opencl). The same programs are also rendered for
# CUDA and compiled by NVRTC to PTX, which ptxas assembles for sm_80 and sm_90 (FRIT_CHECK_CUDA=1,
# when the CUDA toolkit is installed). OPENCL_SAMPLE=0/1: the whole matrix (~50 min on 2 cores).
OPENCL_SAMPLE ?= 0/40
# the CUDA toolkit (NVRTC, ptxas) is on CI's machines: its absence fails the CUDA check there
REQUIRE_NVRTC ?= $(if $(wildcard /usr/local/cuda/bin/ptxas),1,0)
# An OpenCL driver for the device tests: PoCL from Debian when none is installed (needs root).
opencl-driver:
	ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pocl-opencl-icd ocl-icd-libopencl1)

# A virtual X server and Mesa's software OpenGL for frit.window's tests (tests/python/test_window.py
# starts its own Xvfb); Debian's packages when Xvfb is missing (needs root).
window-deps:
	command -v Xvfb >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xvfb libgl1-mesa-dri libglx-mesa0)

# protobuf-c (the ONNX importer) and Debian's ONNX backend node tests (tests/python/test_onnx*.py)
# when missing (needs root). make has already chosen whether to build the importer: this target
# runs first in `check`, whose sub-makes see the result.
onnx-deps:
	( test -e /usr/include/protobuf-c/protobuf-c.h && command -v protoc-c >/dev/null 2>&1 && \
	  test -d /usr/share/libonnx-testdata/data/node ) || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libprotobuf-c-dev \
	   protobuf-c-compiler libonnx-testdata)

# The importers' fuzzers (tests/fuzz/fuzz_stablehlo.c, fuzz_onnx.c; tests/fuzz/run_fuzz.sh says how
# they are built): a short pass in `check`, a long one (FUZZ_IMPORT_SECONDS each, default 1800).
FUZZ_IMPORT_SECONDS ?= 1800
fuzz-import-short:
	sh tests/fuzz/run_fuzz.sh 20
fuzz-import:
	sh tests/fuzz/run_fuzz.sh $(FUZZ_IMPORT_SECONDS)

# Open MPI (Debian's openmpi-bin) for the multi-rank tests when mpirun is missing (needs root).
# frit itself never links it: src/dist/mpi.c loads libmpi.so.40 at run time.
mpi-deps:
	command -v mpirun >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin)

# The MPI layer's own test (tests/mpi/test_dist_mpi.c) without a launcher, on 2 and 4 ranks, and
# its deadline; the Python multi-rank cases run in `pytest` (tests/python/test_distributed.py).
MPIRUN = mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
$(BUILD)/mpi/test_dist_mpi: tests/mpi/test_dist_mpi.c $(BUILD)/libfrit.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libfrit.a $(LDLIBS_ALL)
test-mpi: all mpi-deps $(BUILD)/mpi/test_dist_mpi
	$(BUILD)/mpi/test_dist_mpi
	$(MPIRUN) -n 2 $(BUILD)/mpi/test_dist_mpi
	$(MPIRUN) -n 4 $(BUILD)/mpi/test_dist_mpi
	FRIT_DIST_TIMEOUT=1 $(MPIRUN) -x FRIT_DIST_TIMEOUT -n 2 $(BUILD)/mpi/test_dist_mpi timeout

pytest-opencl: all opencl-driver
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r tests/python/requirements.txt
	FRIT_REQUIRE_OPENCL=1 FRIT_REQUIRE_NVRTC=$(REQUIRE_NVRTC) FRIT_LIB=$(abspath $(BUILD)/libfrit.so) \
	  $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_WORKERS) tests/python/test_device.py
	FRIT_DEVICE=opencl FRIT_CHECK_CUDA=$(REQUIRE_NVRTC) FRIT_MATRIX_SAMPLE=$(OPENCL_SAMPLE) \
	  FRIT_LIB=$(abspath $(BUILD)/libfrit.so) $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_WORKERS) \
	  tests/python/test_control.py tests/python/test_control_host.py tests/python/test_op_matrix.py \
	  tests/python/test_examples_control.py tests/python/test_nn_optim.py tests/python/test_math_accuracy.py \
	  -k "(test_matrix and not interp and not test_matrix_size) or (test_control and jit) or \
	      (test_examples_control and not scripts_run and not kernel_structure) or compile_step_is_one_program or \
	      test_within_one_ulp or test_float64_exp_log or test_log_of_subnormals"

# The long differential fuzz of whole tensor programs (compiled vs the unfused reference).
fuzz-programs: all
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r tests/python/requirements.txt
	FRIT_LIB=$(abspath $(BUILD)/libfrit.so) FRIT_FUZZ_PROGRAMS=$${FRIT_FUZZ_PROGRAMS:-3000} \
	  FRIT_FUZZ_SEED=$${FRIT_FUZZ_SEED:-100000} $(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/python/test_fuzz_programs.py

# The long numpy-oracle fuzz (numpy vs eager frit vs jitted frit), FRIT_FUZZ_NUMPY_SECONDS long;
# failures print as shrunk standalone reproducers. FRIT_FUZZ_KNOWN=1 adds known-bug features.
fuzz-numpy: all
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r tests/python/requirements.txt
	FRIT_LIB=$(abspath $(BUILD)/libfrit.so) FRIT_FUZZ_NUMPY_SECONDS=$${FRIT_FUZZ_NUMPY_SECONDS:-1800} \
	  $(VENV)/bin/python tests/python/numpy_fuzz.py

bench: all $(BENCH_BINS)

demo: all $(BUILD)/examples/nbody
	$(BUILD)/frit simplify '(x*4+y)/4 + (x*4+y)%4' --range x=0:16 --range y=0:4
	$(BUILD)/examples/nbody

# Fashion-MNIST end to end (docs/training.md): the data from Debian's package, installed when
# missing (needs root and apt); then the Python MLP and CNN, and the C MLP.
FASHION_DIR ?= /usr/share/datasets/fashion-mnist
fashion-mnist: all $(BUILD)/examples/train_mlp
	test -e $(FASHION_DIR)/train-images-idx3-ubyte.gz || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist)
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r tests/python/requirements.txt
	FRIT_LIB=$(abspath $(BUILD)/libfrit.so) $(VENV)/bin/python examples/fashion_mnist.py --model mlp --epochs 5 --plot fashion_mnist_mlp.png
	FRIT_LIB=$(abspath $(BUILD)/libfrit.so) $(VENV)/bin/python examples/fashion_mnist.py --model cnn --conf 8-16-128 --epochs 5 --plot fashion_mnist_cnn.png
	$(BUILD)/examples/train_mlp $(FASHION_DIR) 5

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_BINS:=.d) $(BENCH_BINS:=.d) $(EXAMPLE_BINS:=.d)

# The public array API conformance suite (data-apis/array-api-tests, 2023.12, with its array-api
# submodule) checked out outside the repo; not in CI. Fixed examples (--derandomize) so runs compare.
ARRAY_API_TESTS_DIR ?= /work/array-api-tests
CONFORMANCE_EXAMPLES ?= 20
conformance: all
	@test -f $(ARRAY_API_TESTS_DIR)/array_api_tests/__init__.py || { echo "conformance: no array-api-tests \
checkout at $(ARRAY_API_TESTS_DIR); clone https://github.com/data-apis/array-api-tests with \
--recurse-submodules there or set ARRAY_API_TESTS_DIR"; exit 2; }
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -r $(ARRAY_API_TESTS_DIR)/requirements.txt numpy
	rm -rf $(BUILD)/conformance/cache && mkdir -p $(BUILD)/conformance/cache
	PYTHONPATH=$(abspath python) FRIT_LIB=$(abspath $(BUILD)/libfrit.so) \
	  FRIT_CACHE_DIR=$(abspath $(BUILD)/conformance/cache) $(VENV)/bin/python tests/conformance/run_suite.py \
	  $(ARRAY_API_TESTS_DIR) --max-examples $(CONFORMANCE_EXAMPLES) --out $(BUILD)/conformance $(CONFORMANCE_FILES)
