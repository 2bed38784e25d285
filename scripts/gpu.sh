#!/usr/bin/env bash
# Builds, on a machine with Go and a C compiler, what the GPU machine runs
# (it has no Go toolchain and no network): with CGO_ENABLED=1 and -tags xla
# (GoMLX's XLA backend, which loads the CUDA PJRT plugin at run time),
#
#   out/gpu/device.test   the tests and benchmarks of package device
#   out/gpu/nn.test       the tests of package nn
#   out/gpu/kernelkit     the command (fit --device cuda, ...)
#
# stripped of symbols so that the folder stays small enough to carry to
# the GPU machine (out/ is git-ignored). scripts/gpu_run.sh, run there from
# the repository root, finds the plugin and runs them with the PyTorch
# references:
#
#   scripts/gpu.sh                   # here
#   bash scripts/gpu_run.sh          # on the GPU machine, with out/gpu beside the tree
#
# GPU_OUT names another folder than out/gpu.
set -euo pipefail
cd "$(dirname "$0")/.."
dst=${GPU_OUT:-out/gpu}
mkdir -p "$dst"
export CGO_ENABLED=1
flags=(-tags xla -trimpath -ldflags "-s -w")
echo "== building into $dst (CGO_ENABLED=1 -tags xla)"
go test -c "${flags[@]}" -o "$dst/device.test" ./device
go test -c "${flags[@]}" -o "$dst/nn.test" ./nn
go build "${flags[@]}" -o "$dst/kernelkit" ./cmd/kernelkit
git rev-parse HEAD >"$dst/commit" 2>/dev/null || echo unknown >"$dst/commit"
if ! git diff --quiet HEAD 2>/dev/null; then
  echo "(with uncommitted changes)" >>"$dst/commit"
fi
# The binaries must say they have the XLA backend, and without a plugin
# the command must end with one clear line.
if ! "$dst/device.test" -test.list 'TestMapTransform' | grep -q TestMapTransform; then
  echo "gpu.sh: $dst/device.test does not list its tests" >&2
  exit 1
fi
msg=$(GOMLX_NO_AUTO_INSTALL=1 PJRT_PLUGIN_LIBRARY_PATH=/nonexistent "$dst/kernelkit" transform \
  --data data/letter.csv --label label --features 8 --device cuda 2>&1 >/dev/null || true)
case $msg in
  "kernelkit: --device cuda: no usable GPU"*) echo "== without a plugin: $msg" ;;
  *)
    echo "gpu.sh: unexpected message of kernelkit --device cuda without a plugin: $msg" >&2
    exit 1
    ;;
esac
du -ch "$dst"/device.test "$dst"/nn.test "$dst"/kernelkit | tail -n 1 | sed 's/^/== size of the binaries: /'
echo "== done; on the GPU machine: bash scripts/gpu_run.sh (carrying $dst)"
