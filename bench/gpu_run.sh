#!/bin/bash
# The prepared run for a lent NVIDIA GPU (issue 12, part 6): CUDA device tests, a sample of the op
# matrix on CUDA, then the GPU benchmarks (bench/bench_gpu.py, the CNN step). It stops at the
# first sign that the backend does not work, to spend little device time. Logs go to $OUT (else
# ./gpu-out). Needs build/libfrit.so (built here or carried) and python3 with torch.
# SAMPLE=k/n picks the op-matrix rows (default 0/8); PARTS="tests matrix bench cnn" selects steps.
O=${OUT:-gpu-out}
mkdir -p "$O"
exec > >(tee "$O/log.txt") 2>&1
PARTS=${PARTS:-tests matrix bench cnn}
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
python3 - <<'PY' || exit 1
import numpy as np, frit
x = np.linspace(-2, 2, 100000).astype(np.float32)
f = frit.jit(lambda a: (frit.exp(a) * a).sum(), device="cuda")
got, want = float(np.asarray(f(x))), float((np.exp(x.astype(np.float64)) * x).sum())
print("smoke", got, want)
assert abs(got - want) <= 1e-4 * abs(want), (got, want)
PY
t=$SECONDS
if [[ $PARTS == *tests* ]]; then
  FRIT_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider -n "$W" tests/python/test_device.py 2>&1 | tail -25
  echo "== tests $((SECONDS - t)) s"
fi
t=$SECONDS
if [[ $PARTS == *matrix* ]]; then
  FRIT_DEVICE=cuda FRIT_MATRIX_SAMPLE=${SAMPLE:-0/8} timeout ${MATRIX_S:-170} python3 -m pytest -q -p no:cacheprovider -n "$W" \
    tests/python/test_control.py tests/python/test_control_host.py tests/python/test_op_matrix.py \
    tests/python/test_examples_control.py tests/python/test_nn_optim.py -rf \
    -k "(test_matrix and not interp and not test_matrix_size) or (test_control and jit) or \
        (test_examples_control and not scripts_run and not kernel_structure) or compile_step_is_one_program" \
    >"$O/matrix.txt" 2>&1
  grep -E "^FAILED|passed|failed" "$O/matrix.txt" | cut -c1-300 | tail -40
  echo "== matrix $((SECONDS - t)) s"
fi
t=$SECONDS
if [[ $PARTS == *bench* ]]; then
  timeout ${BENCH_S:-200} python3 bench/bench_gpu.py | tee "$O/bench.jsonl"
  echo "== bench $((SECONDS - t)) s"
fi
t=$SECONDS
if [[ $PARTS == *cnn* ]]; then
  FRIT_DEVICE=cuda FRIT_BENCH_TORCH_DEVICE=cuda timeout 60 python3 bench/bench_cnn_step.py step | tee -a "$O/bench.jsonl"
  # where the step's time goes: FRIT_PROFILE=1 prints each program's kernels at exit
  FRIT_PROFILE=1 FRIT_DEVICE=cuda FRIT_BENCH_TORCH_DEVICE=none timeout 60 python3 bench/bench_cnn_step.py step \
    >"$O/cnn_profile.txt" 2>&1
  grep -E "^ +[0-9.]+% " "$O/cnn_profile.txt" | sort -rn | head -15
  echo "== cnn $((SECONDS - t)) s"
fi
