#!/bin/sh
# Fuzzes the importers, each for SECONDS (argv[1]): tests/fuzz/fuzz_stablehlo.c and, when frit is
# built with protobuf-c, tests/fuzz/fuzz_onnx.c. libFuzzer + ASan (clang) when available, on a
# library built by clang in build-fuzz/; else the harnesses' mutation driver (driver.h) on the
# ASan+UBSan build (build-asan/). Seeds: modules jax printed (tests/fuzz/stablehlo_seeds/), the C
# tests' sample ONNX model, past crashes (tests/fuzz/corpus_onnx/) and small models of Debian's
# libonnx-testdata. Used by `make fuzz-import-short` (CI) and `make fuzz-import` (long).
set -e
secs=${1:-30}
make=${MAKE:-make}
fz=build-fuzz
mkdir -p $fz/corpus_stablehlo $fz/corpus_onnx $fz/crashes
libs="-lm -ldl -lpthread"
harnesses=stablehlo
cp tests/fuzz/stablehlo_seeds/* $fz/corpus_stablehlo/
if [ -e /usr/include/protobuf-c/protobuf-c.h ] && command -v protoc-c >/dev/null 2>&1; then
  harnesses="stablehlo onnx"
  libs="$libs -lprotobuf-c"
  cc -Iinclude -o $fz/make_seed tests/fuzz/make_seed.c && $fz/make_seed $fz/corpus_onnx/sample.onnx
  # inputs that once crashed the importer stay in the seeds
  cp tests/fuzz/corpus_onnx/* $fz/corpus_onnx/
  for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    [ -e "$m" ] || break
    # the small ones: a varied seed set that the fuzzer mutates quickly
    [ "$(wc -c < "$m")" -le 400 ] && cp "$m" "$fz/corpus_onnx/$(basename "$(dirname "$m")").onnx"
  done
else
  echo "run_fuzz: frit is built without protobuf-c here (make onnx-deps); the ONNX importer is not fuzzed"
fi
probe=$fz/probe.c
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > $probe
if clang -fsanitize=fuzzer,address $probe -o $fz/probe 2>/dev/null; then
  # glibc's <complex.h> defines CMPLXF/CMPLX for gcc only; clang has the builtin they stand for
  $make --no-print-directory BUILD=$fz CC=clang WERROR= OPT="-O1 -g" \
    CFLAGS="-D'CMPLXF(x,y)=__builtin_complex((float)(x),(float)(y))' -D'CMPLX(x,y)=__builtin_complex((double)(x),(double)(y))'" \
    SAN="-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer" $fz/libfrit.a
  for h in $harnesses; do
    clang -fsanitize=fuzzer,address -g -O1 -Iinclude tests/fuzz/fuzz_$h.c $fz/libfrit.a $libs -o $fz/fuzz_$h
    # -timeout: one input that takes seconds to build is a bug too
    $fz/fuzz_$h -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix=$fz/crashes/ $fz/corpus_$h
  done
else
  echo "run_fuzz: clang's libFuzzer is unavailable; running the mutation driver under ASan"
  $make --no-print-directory BUILD=build-asan WERROR= OPT="-O1 -g" \
    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" build-asan/libfrit.a
  for h in $harnesses; do
    cc -DFRIT_FUZZ_DRIVER -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1 -Iinclude \
      tests/fuzz/fuzz_$h.c build-asan/libfrit.a $libs -o $fz/fuzz_${h}_driver
    $fz/fuzz_${h}_driver "$secs" $fz/corpus_$h/*
  done
fi
