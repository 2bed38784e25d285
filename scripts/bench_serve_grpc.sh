#!/usr/bin/env bash
# Transports of `kernelkit serve` side by side in one run (issue 26): fits
# the letter model (16000 training rows, standardised, RBF gamma = 1/16, D
# features, lambda = 0.5, seed 1, as scripts/serve_bench.sh), serves it on
# loopback ports with --grpc-addr, and measures 1-row and 256-row infer
# requests over REST with JSON data (rest-json), REST with the binary
# tensor data extension (rest-binary: raw FP64 bytes in, binary outputs
# back) and gRPC ModelInfer with raw_input_contents (grpc-raw) at 1 and 16
# concurrent clients, with the same closed-loop driver (cmd/kernelkit-loadtest
# --transports, DURATION per cell), then the in-process Classify rows/s on
# the same rows as the ceiling. The server is stopped with SIGTERM and must
# exit with status 0.
#
# Usage: scripts/bench_serve_grpc.sh [D]
# Environment: DURATION (default 3s), CONCURRENCY (default 1,16), ROWS
#   (default 1,256), TRANSPORTS (default rest-json,rest-binary,grpc-raw),
#   SERVE_FLAGS (extra flags for kernelkit serve), PORT (default 18080),
#   GRPC_PORT (default 18081).
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:-1024}
DURATION=${DURATION:-3s}
CONCURRENCY=${CONCURRENCY:-1,16}
ROWS=${ROWS:-1,256}
TRANSPORTS=${TRANSPORTS:-rest-json,rest-binary,grpc-raw}
PORT=${PORT:-18080}
GRPC_PORT=${GRPC_PORT:-18081}
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then kill "$server"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "== $(uptime)"
echo "== $(nproc) CPUs, $(go version), $(date -u +%Y-%m-%d)"
go build -o "$tmp/kernelkit" ./cmd/kernelkit
go build -o "$tmp/loadtest" ./cmd/kernelkit-loadtest
head -n 16001 data/letter.csv > "$tmp/train.csv"
"$tmp/kernelkit" fit --train "$tmp/train.csv" --kernel rbf --gamma 0.0625 --features "$D" \
  --sampler iid --lambda 0.5 --seed 1 --model "$tmp/letter.kk" | tail -n 3
# shellcheck disable=SC2086 # SERVE_FLAGS is a list of flags
"$tmp/kernelkit" serve --model "$tmp/letter.kk" --addr "127.0.0.1:$PORT" --grpc-addr "127.0.0.1:$GRPC_PORT" \
  --log-level warn ${SERVE_FLAGS:-} &
server=$!
echo "== kernelkit serve --grpc-addr ${SERVE_FLAGS:-} (D = $D)"
"$tmp/loadtest" --url "http://127.0.0.1:$PORT" --grpc-addr "127.0.0.1:$GRPC_PORT" --model letter \
  --data data/letter.csv --first-row 16000 --transports "$TRANSPORTS" \
  --rows "$ROWS" --concurrency "$CONCURRENCY" --duration "$DURATION" --model-file "$tmp/letter.kk"
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
echo "== server exit status after SIGTERM: $status"
echo "== $(uptime)"
exit "$status"
