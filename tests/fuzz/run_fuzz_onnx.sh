#!/bin/sh
# Fuzzes the ONNX importer for SECONDS (argv[1]): libFuzzer + ASan (clang) when available, on a
# library built by clang in build-fuzz/; else tests/fuzz/fuzz_onnx.c's own mutation driver on the
# ASan+UBSan build (build-asan/). Seeds: the C tests' sample model, past crashes
# (tests/fuzz/corpus_onnx/) and small models of Debian's libonnx-testdata. Used by `make fuzz-import-short` (CI) and `make fuzz-import` (long).
set -e
secs=${1:-30}
make=${MAKE:-make}
fz=build-fuzz
mkdir -p $fz/corpus_onnx $fz/crashes
libs="-lm -ldl -lpthread -lprotobuf-c"
if [ ! -e /usr/include/protobuf-c/protobuf-c.h ]; then
  echo "fuzz_onnx: frit is built without protobuf-c here (make onnx-deps); nothing to fuzz"; exit 0
fi
cc -Iinclude -o $fz/make_seed tests/fuzz/make_seed.c && $fz/make_seed $fz/corpus_onnx/sample.onnx
# inputs that once crashed the importer stay in the seeds
cp tests/fuzz/corpus_onnx/* $fz/corpus_onnx/
for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
  [ -e "$m" ] || break
  # the small ones: a varied seed set that the fuzzer mutates quickly
  [ "$(wc -c < "$m")" -le 400 ] && cp "$m" "$fz/corpus_onnx/$(basename "$(dirname "$m")").onnx"
done
probe=$fz/probe.c
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > $probe
if clang -fsanitize=fuzzer,address $probe -o $fz/probe 2>/dev/null; then
  # glibc's <complex.h> defines CMPLXF/CMPLX for gcc only; clang has the builtin they stand for
  $make --no-print-directory BUILD=$fz CC=clang WERROR= OPT="-O1 -g" \
    CFLAGS="-D'CMPLXF(x,y)=__builtin_complex((float)(x),(float)(y))' -D'CMPLX(x,y)=__builtin_complex((double)(x),(double)(y))'" \
    SAN="-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer" $fz/libfrit.a
  clang -fsanitize=fuzzer,address -g -O1 -Iinclude tests/fuzz/fuzz_onnx.c $fz/libfrit.a $libs -o $fz/fuzz_onnx
  # -timeout: one input that takes seconds to build is a bug too
  $fz/fuzz_onnx -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix=$fz/crashes/ $fz/corpus_onnx
else
  echo "fuzz_onnx: clang's libFuzzer is unavailable; running the mutation driver under ASan"
  $make --no-print-directory BUILD=build-asan WERROR= OPT="-O1 -g" \
    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" build-asan/libfrit.a
  cc -DFRIT_FUZZ_DRIVER -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1 -Iinclude \
    tests/fuzz/fuzz_onnx.c build-asan/libfrit.a $libs -o $fz/fuzz_onnx_driver
  $fz/fuzz_onnx_driver "$secs" $fz/corpus_onnx/*
fi
