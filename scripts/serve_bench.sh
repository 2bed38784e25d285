#!/usr/bin/env bash
# Throughput and latency of `kernelkit serve` on this machine: fits the letter
# model (16000 training rows, standardised, RBF gamma = 1/16, D features,
# lambda = 0.5, seed 1), serves it on a loopback port, and measures 1-row and
# 256-row infer requests at several numbers of concurrent clients with the
# vegeta-based cmd/kernelkit-loadtest program (closed loop, DURATION per cell), then
# the in-process Classify rows/s on the same rows as the ceiling. The server
# is stopped with SIGTERM and must exit with status 0.
#
# Usage: scripts/serve_bench.sh [D]
# Environment: DURATION (default 3s), CONCURRENCY (default 1,4,16),
#   ROWS (default 1,256), SERVE_FLAGS (extra flags for kernelkit serve, e.g.
#   "--no-batch" or "--batch-wait 1ms"), PORT (default 18080).
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:-1024}
DURATION=${DURATION:-3s}
CONCURRENCY=${CONCURRENCY:-1,4,16}
ROWS=${ROWS:-1,256}
PORT=${PORT:-18080}
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then kill "$server"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "== $(uptime)"
echo "== $(nproc) CPUs, $(go version)"
go build -o "$tmp/kernelkit" ./cmd/kernelkit
go build -o "$tmp/loadtest" ./cmd/kernelkit-loadtest
if ! "$tmp/kernelkit" serve --help >/dev/null 2>&1; then
  echo "serve_bench: this kernelkit has no serve command" >&2
  exit 1
fi
head -n 16001 data/letter.csv > "$tmp/train.csv"
"$tmp/kernelkit" fit --train "$tmp/train.csv" --kernel rbf --gamma 0.0625 --features "$D" \
  --sampler iid --lambda 0.5 --seed 1 --model "$tmp/letter.kk" | tail -n 3
# shellcheck disable=SC2086 # SERVE_FLAGS is a list of flags
"$tmp/kernelkit" serve --model "$tmp/letter.kk" --addr "127.0.0.1:$PORT" --log-level warn ${SERVE_FLAGS:-} &
server=$!
echo "== kernelkit serve ${SERVE_FLAGS:-} (D = $D)"
"$tmp/loadtest" --url "http://127.0.0.1:$PORT" --model letter --data data/letter.csv --first-row 16000 \
  --rows "$ROWS" --concurrency "$CONCURRENCY" --duration "$DURATION" --model-file "$tmp/letter.kk"
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
echo "== server exit status after SIGTERM: $status"
echo "== $(uptime)"
exit "$status"
