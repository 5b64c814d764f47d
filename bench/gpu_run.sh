#!/bin/bash
# The prepared run for a lent NVIDIA GPU (issue 12, part 6): CUDA device tests, a sample of the op
# matrix on CUDA, the GPU benchmarks (bench/bench_gpu.py, the CNN step). It stops at the first
# sign that the backend does not work, to spend little device time. Logs go to $OUT (else
# ./gpu-out). Needs build/libfrit.so (built here or carried) and python3 with torch.
# PARTS lists the steps, run in its order (default "tests matrix bench cnn"; also "tile": the tiled
# contractions' tests and matmul at each staging depth FRIT_DEVICE_TILE_BK; "sweep": the
# CUDA launch knobs FRIT_CUDA_EPT and FRIT_DEVICE_UNROLL on the bandwidth-bound workloads, the
# best kept for the steps after it). SAMPLE=k/n picks the op-matrix rows (default 0/8).
O=${OUT:-gpu-out}
mkdir -p "$O"
exec > >(tee "$O/log.txt") 2>&1
nvidia-smi -L
python3 -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__)"
test -e build/libfrit.so || make -j"$(nproc)" build/libfrit.so >"$O/build.txt" 2>&1 || { tail -30 "$O/build.txt"; exit 1; }
# NVRTC: the toolkit's, else the copy in python's nvidia wheels
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
  $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, s, "lib") for p in nvidia.__path__ for s in os.listdir(p)))' 2>/dev/null); do
  if ls "$d"/libnvrtc.so* >/dev/null 2>&1; then export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; echo "nvrtc from $d"; break; fi
done
export FRIT_LIB=$PWD/build/libfrit.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1 FRIT_CACHE_DIR=/tmp/frit-cache
W=$(( $(nproc) > 16 ? 16 : $(nproc) ))
[ -n "$NO_SMOKE" ] || python3 - <<'PY' || exit 1
import numpy as np, frit
x = np.linspace(-2, 2, 100000).astype(np.float32)
f = frit.jit(lambda a: (frit.exp(a) * a).sum(), device="cuda")
got, want = float(np.asarray(f(x))), float((np.exp(x.astype(np.float64)) * x).sum())
print("smoke", got, want)
assert abs(got - want) <= 1e-4 * abs(want), (got, want)
PY

part_tests() {
  FRIT_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider -n "$W" tests/python/test_device.py 2>&1 | tail -25
}
part_matrix() {
  FRIT_DEVICE=cuda FRIT_MATRIX_SAMPLE=${SAMPLE:-0/8} timeout ${MATRIX_S:-170} python3 -m pytest -q -p no:cacheprovider -n "$W" \
    tests/python/test_control.py tests/python/test_control_host.py tests/python/test_op_matrix.py \
    tests/python/test_examples_control.py tests/python/test_nn_optim.py -rf \
    -k "(test_matrix and not interp and not test_matrix_size) or (test_control and jit) or \
        (test_examples_control and not scripts_run and not kernel_structure) or compile_step_is_one_program" \
    >"$O/matrix.txt" 2>&1
  grep -E "^FAILED|passed|failed" "$O/matrix.txt" | cut -c1-300 | tail -40
}
part_tile() {
  # the tiled contractions (linear_tile.c) against numpy on CUDA, then matmul at each staging depth
  FRIT_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider -n "$W" tests/python/test_device.py -k tiled 2>&1 | tail -4
  for bk in 8 16 32; do
    FRIT_DEVICE_TILE_BK=$bk FRIT_BENCH_NO_PEER=1 timeout 60 python3 bench/bench_gpu.py matmul | grep -v "\"gpu_copy_bandwidth\"" \
      | sed "s/^{/{\"tile_bk\": $bk, /" | tee -a "$O/tile.jsonl"
  done
}
part_sweep() {
  best=; best_ms=
  for knobs in "0 1" "0 4" "1 1" "4 4" "8 4"; do
    set -- $knobs
    FRIT_CUDA_EPT=$1 FRIT_DEVICE_UNROLL=$2 FRIT_BENCH_NO_PEER=1 timeout 60 python3 bench/bench_gpu.py scale elementwise reduce softmax \
      | grep -v "\"gpu_copy_bandwidth\"" | sed "s/^{/{\"ept\": $1, \"unroll\": $2, /" | tee -a "$O/sweep.jsonl" >"$O/sweep_one.jsonl"
    ms=$(python3 -c "import json,sys; print(sum(json.loads(l)['value'] or 1e9 for l in open(sys.argv[1])))" "$O/sweep_one.jsonl")
    echo "ept=$1 unroll=$2: $ms ms in all"
    if [ -z "$best_ms" ] || python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))" "$ms" "$best_ms"; then
      best="$1 $2"; best_ms=$ms
    fi
  done
  set -- $best
  export FRIT_CUDA_EPT=$1 FRIT_DEVICE_UNROLL=$2
  echo "kept FRIT_CUDA_EPT=$1 FRIT_DEVICE_UNROLL=$2"
}
part_bench() {
  timeout ${BENCH_S:-200} python3 bench/bench_gpu.py | tee -a "$O/bench.jsonl"
}
part_cnn() {
  FRIT_DEVICE=cuda FRIT_BENCH_TORCH_DEVICE=cuda timeout 60 python3 bench/bench_cnn_step.py step | tee -a "$O/bench.jsonl"
  # where the step's time goes: FRIT_PROFILE=1 prints each program's kernels at exit
  FRIT_PROFILE=1 FRIT_DEVICE=cuda FRIT_BENCH_TORCH_DEVICE=none timeout 60 python3 bench/bench_cnn_step.py step \
    >"$O/cnn_profile.txt" 2>&1
  grep -E "^ +[0-9.]+% " "$O/cnn_profile.txt" | sort -rn | head -8
}
for p in ${PARTS:-tests matrix bench cnn}; do
  t=$SECONDS
  "part_$p"
  echo "== $p $((SECONDS - t)) s"
done
