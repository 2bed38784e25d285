#!/usr/bin/env bash
# Throughput and latency of `kernelkit serve` on sequence models (issue 36):
# trains an FD-TNN and a Performer (length LENGTH = 512, width 64, depth 4,
# the defaults otherwise) for STEPS steps on generated ListOps, exports them
# (train --export), serves both (REST and gRPC) and runs
# scripts/serve_seq_bench.go: the in-process forward pass of each inference
# file at 1 and 16 sequences per call, then 1 and 16 clients sending one
# sequence per request as text over REST JSON and gRPC, ROUNDS times each
# (the table gives medians: the machine is shared). Then, when a python3
# with torch is found (Debian: apt-get install python3-torch), the PyTorch CPU
# forward pass of the same architectures and parameter counts
# (scripts/torch_seq_forward.py) at batch 1 and 16, on as many threads as
# the Go side has CPUs. The server is stopped with SIGTERM and must exit 0.
#
# Usage: scripts/serve_seq_bench.sh
# Environment: DURATION (default 3s per cell), ROUNDS (3), CONCURRENCY (1,16), STEPS (2),
#   LENGTH (512), PORT (18090), GRPC_PORT (18091), PYTHON (a python3 that
#   imports torch; default: python3, else /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-3s}
ROUNDS=${ROUNDS:-3}
CONCURRENCY=${CONCURRENCY:-1,16}
STEPS=${STEPS:-2}
LENGTH=${LENGTH:-512}
PORT=${PORT:-18090}
GRPC_PORT=${GRPC_PORT:-18091}
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then kill "$server"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "== $(date -u +%Y-%m-%dT%H:%MZ); $(uptime)"
echo "== $(nproc) CPUs, $(go version)"
go build -o "$tmp/kernelkit" ./cmd/kernelkit
for kind in fd-tnn performer; do
  "$tmp/kernelkit" train --model "$kind" --length "$LENGTH" --width 64 --depth 4 --steps "$STEPS" --batch 8 \
    --n-train 64 --n-eval 0 --n-test 64 --seed 1 --write-data "$tmp/data" --export "$tmp/$kind.kks" | grep -E '^(model|parameters)'
done
"$tmp/kernelkit" serve --model "fdtnn=$tmp/fd-tnn.kks" --model "performer=$tmp/performer.kks" \
  --addr "127.0.0.1:$PORT" --grpc-addr "127.0.0.1:$GRPC_PORT" --log-level warn &
server=$!
for _ in $(seq 300); do
  if curl -sf "http://127.0.0.1:$PORT/v2/health/ready" >/dev/null; then break; fi
  sleep 0.1
done
echo "== kernelkit serve (defaults: --batch-wait 200µs, --max-batch-rows 256, --batch-workers = CPUs)"
go run scripts/serve_seq_bench.go --url "http://127.0.0.1:$PORT" --grpc-addr "127.0.0.1:$GRPC_PORT" \
  --model "fdtnn=$tmp/fd-tnn.kks" --model "performer=$tmp/performer.kks" --data "$tmp/data/listops_test.tsv" \
  --concurrency "$CONCURRENCY" --duration "$DURATION" --rounds "$ROUNDS"
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
echo "== server exit status after SIGTERM: $status"
py=${PYTHON:-}
if [[ -z $py ]]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import torch' 2>/dev/null; then py=$p; break; fi
  done
fi
if [[ -n $py ]]; then
  secs=${DURATION%s}
  echo "== PyTorch CPU forward pass ($py), $(nproc) threads"
  for _ in $(seq "$ROUNDS"); do
    for kind in fd-tnn performer; do
      "$py" scripts/torch_seq_forward.py --kind "$kind" --length "$LENGTH" --width 64 --depth 4 --batch 1,16 \
        --seconds "$secs" --threads "$(nproc)"
    done
  done
else
  echo "== no python3 with torch (apt-get install python3-torch): PyTorch skipped"
fi
echo "== $(uptime)"
exit "$status"
