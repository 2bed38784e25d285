#!/usr/bin/env bash
# Runs kernelkit's GPU tests, benchmarks and PyTorch references on the GPU
# machine (issue 18), from the repository root, with the binaries that
# scripts/gpu.sh built elsewhere in out/gpu (that machine has no Go
# toolchain and no network):
#
#   bash scripts/gpu_run.sh [all|tests|bench|torch|table]     (default all)
#
# Results go to out/gpu-results (GPU_RESULTS), which stays between calls
# on a machine kept warm, and are copied to $OUT when it is set (the
# device tool's folder that comes back): gpu.txt (the GPU and the setup
# found), tests.txt, bench_f32.txt (TF32 off), bench_tf32.txt (XLA's
# default TF32 products), torch.txt and table.md, the table of all
# benchmark lines found so far side by side, printed after bench and
# torch. A phase takes up to about 8 minutes, so where one command may
# run 10 minutes call the phases one by one: tests, bench, torch.
#
# Setup, as found to work on an H100 with the CUDA PJRT plugin that JAX
# ships in the machine's Python environment:
#   - a directory holding a symlink pjrt_c_api_cuda_plugin.so to that
#     plugin (find / -name xla_cuda_plugin.so), on PJRT_PLUGIN_LIBRARY_PATH;
#   - GOMLX_NO_AUTO_INSTALL=1 (nothing can be downloaded there);
#   - XLA_FLAGS=--xla_gpu_cuda_data_dir=<the CUDA root> (the directory
#     with nvvm/libdevice: /usr/local/cuda, or the Python environment's
#     nvidia/cuda_nvcc);
#   - LD_LIBRARY_PATH with the Python environment's nvidia/*/lib;
#   - GOPJRT_CUDA_CHECKS=0.
# Float32 means float32 arithmetic: for the tests and bench_f32.txt TF32 is
# turned off (NVIDIA_TF32_OVERRIDE=0 for cuBLAS, and XLA's Triton GEMMs,
# which ignore it, disabled by --xla_gpu_enable_triton_gemm=false when
# this XLA knows the flag); bench_tf32.txt keeps XLA's default. The test
# TestProjectionPrecision logs which held (float32 error ≈ 1e-6, TF32 ≈
# 5e-4).
#
# Environment: OUT, GPU_RESULTS (default out/gpu-results), GPU_BIN
# (default out/gpu), PYTHON (default python3), BENCHTIME (default 1s),
# TEST_TIMEOUT (default 300s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
phase=${1:-all}
out=${GPU_RESULTS:-out/gpu-results}
bin=$(cd "${GPU_BIN:-out/gpu}" 2>/dev/null && pwd) || {
  echo "gpu_run.sh: no ${GPU_BIN:-out/gpu}: build it with scripts/gpu.sh and carry it here" >&2
  exit 1
}
py=${PYTHON:-python3}
benchtime=${BENCHTIME:-1s}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "== $*" | tee -a "$out/gpu.txt"; }

# --- setup ---------------------------------------------------------------
: >"$out/gpu.txt"
log "commit of the binaries: $(tr '\n' ' ' <"$bin/commit" 2>/dev/null)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/== gpu: /' | tee -a "$out/gpu.txt"
else
  log "no nvidia-smi"
fi
plugin=$(find / -name xla_cuda_plugin.so -not -path '/proc/*' 2>/dev/null | head -n 1)
if [ -z "$plugin" ]; then
  log "no xla_cuda_plugin.so on this machine: the cuda cases will be skipped"
else
  log "plugin: $plugin"
  plugdir=$(mktemp -d)
  ln -s "$plugin" "$plugdir/pjrt_c_api_cuda_plugin.so"
  export PJRT_PLUGIN_LIBRARY_PATH=$plugdir
  # With a plugin present the cuda cases must run: a device that does not
  # open fails the tests instead of skipping them.
  export KERNELKIT_REQUIRE_DEVICE=cuda
  # The Python environment holding the plugin, for its nvidia/*/lib.
  site=${plugin%%/jax_plugins/*}
  [ "$site" != "$plugin" ] || site=$(dirname "$(dirname "$plugin")")
  libs=""
  for d in "$site"/nvidia/*/lib; do
    [ -d "$d" ] && libs="$libs:$d"
  done
  export LD_LIBRARY_PATH="${libs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "LD_LIBRARY_PATH: $LD_LIBRARY_PATH"
fi
cuda_root=""
if [ -d /usr/local/cuda/nvvm/libdevice ]; then
  cuda_root=/usr/local/cuda
else
  libdevice=$(find / -name 'libdevice.10.bc' -not -path '/proc/*' 2>/dev/null | head -n 1)
  [ -n "$libdevice" ] && cuda_root=$(dirname "$(dirname "$(dirname "$libdevice")")")
fi
base_flags=""
if [ -n "$cuda_root" ]; then
  base_flags="--xla_gpu_cuda_data_dir=$cuda_root"
  log "CUDA root: $cuda_root"
else
  log "no CUDA root with nvvm/libdevice found"
fi
export GOMLX_NO_AUTO_INSTALL=1 GOPJRT_CUDA_CHECKS=0

# TF32 off: cuBLAS by NVIDIA_TF32_OVERRIDE, Triton GEMMs by the XLA flag
# (kept only if this XLA accepts it: a small transform must succeed).
probe() {
  "$bin/kernelkit" transform --data data/letter.csv --label label --features 16 --device cuda --out /dev/null 2>&1
}
f32_flags="$base_flags --xla_gpu_enable_triton_gemm=false"
if [ -z "$plugin" ]; then
  f32_flags=$base_flags
elif XLA_FLAGS=$f32_flags NVIDIA_TF32_OVERRIDE=0 probe >"$out/probe.txt"; then
  log "TF32 off: NVIDIA_TF32_OVERRIDE=0 XLA_FLAGS=$f32_flags"
else
  log "probe with --xla_gpu_enable_triton_gemm=false failed: $(tail -n 1 "$out/probe.txt")"
  f32_flags=$base_flags
  if XLA_FLAGS=$f32_flags NVIDIA_TF32_OVERRIDE=0 probe >"$out/probe.txt"; then
    log "TF32 off by NVIDIA_TF32_OVERRIDE=0 only (Triton GEMMs may still use TF32)"
  else
    log "kernelkit --device cuda fails: $(tail -n 1 "$out/probe.txt")"
  fi
fi
f32() { env XLA_FLAGS="$f32_flags" NVIDIA_TF32_OVERRIDE=0 "$@"; }
tf32() { env XLA_FLAGS="$base_flags" "$@"; }

# --- phases --------------------------------------------------------------
status=0
run_tests() {
  log "tests (TF32 off) -> tests.txt"
  : >"$out/tests.txt"
  for pkg in device nn; do
    echo "### $pkg" >>"$out/tests.txt"
    if ! (cd "$pkg" && f32 timeout "${TEST_TIMEOUT:-300}" "$bin/$pkg.test" -test.v -test.count=1 -test.timeout "${TEST_TIMEOUT:-300}s") >>"$out/tests.txt" 2>&1; then
      status=1
      log "$pkg tests FAILED (see tests.txt)"
    fi
  done
  grep -E '^(--- FAIL|FAIL|ok|PASS)' "$out/tests.txt" | tee -a "$out/gpu.txt"
  grep -E 'not tested here|projection error' "$out/tests.txt" | sort -u | head -n 20 | tee -a "$out/gpu.txt"
}
run_bench() {
  log "benchmarks, TF32 off -> bench_f32.txt"
  (cd device && f32 KERNELKIT_BENCH_LARGE=1 timeout 250 "$bin/device.test" -test.run '^$' -test.bench . \
    -test.benchtime "$benchtime" -test.timeout 250s) >"$out/bench_f32.txt" 2>&1 || status=1
  log "benchmarks, XLA's default (TF32) -> bench_tf32.txt"
  (cd device && tf32 KERNELKIT_BENCH_LARGE=1 timeout 200 "$bin/device.test" -test.run '^$' -test.bench '/cuda' \
    -test.benchtime "$benchtime" -test.timeout 200s) 2>&1 | sed 's|/cuda-f32/|/cuda-tf32/|' >"$out/bench_tf32.txt" || status=1
}
run_torch() {
  if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    log "no PyTorch with CUDA for $py: no references"
    return
  fi
  log "PyTorch $("$py" -c 'import torch; print(torch.__version__)') references -> torch.txt"
  timeout 150 "$py" scripts/gpu_torch_maps.py --cases large --tf32 >"$out/torch.txt" 2>&1 || status=1
  if [ -f scripts/gpu_torch_seq.py ]; then
    timeout 300 "$py" scripts/gpu_torch_seq.py --cases large --half >>"$out/torch.txt" 2>&1 || status=1
  fi
}
run_table() {
  log "table -> table.md"
  cat "$out"/bench_*.txt "$out"/torch.txt 2>/dev/null | "$py" -c '
import re, sys
# Benchmark<Op>/<device>/<rest>[-procs] <iters> <ns> ns/op [<rate> <unit>]...
rows, devs = {}, []
for ln in sys.stdin:
    m = re.match(r"^Benchmark(\w+)/([^/\s]+)/(\S+?)(?:-\d+)?\s+\d+\s+([\d.e+]+) ns/op", ln)
    if not m:
        continue
    op, dev, case, ns = m.group(1), m.group(2), m.group(3), float(m.group(4))
    if dev not in devs:
        devs.append(dev)
    rows.setdefault(op + " " + case, {})[dev] = ns / 1e6
print("| benchmark | " + " | ".join(d + " (ms)" for d in devs) + " |")
print("|---|" + "---|" * len(devs))
for key, cells in rows.items():
    print("| " + key + " | " + " | ".join("%.4g" % cells[d] if d in cells else "" for d in devs) + " |")
' | tee "$out/table.md"
}

case $phase in
  all) run_tests; run_bench; run_torch; run_table ;;
  tests) run_tests ;;
  bench) run_bench; run_table ;;
  torch) run_torch; run_table ;;
  table) run_table ;;
  *)
    echo "usage: bash scripts/gpu_run.sh [all|tests|bench|torch|table]" >&2
    exit 2
    ;;
esac
if [ -n "${OUT:-}" ] && mkdir -p "$OUT" && [ "$(cd "$OUT" && pwd)" != "$out" ]; then
  cp "$out"/* "$OUT"/
fi
exit $status
