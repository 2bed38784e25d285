#!/usr/bin/env bash
# Interoperability check of kernelkit serve (issue 26) with clients that
# are not kernelkit's own code: fits a small letter model, writes
# `kernelkit predict`'s labels for 200 test rows, serves the model with
# --grpc-addr and checks that
#  - a Python gRPC client generated from the published proto by
#    grpcio-tools (Debian: apt-get install python3-grpc-tools
#    python3-grpcio) gets the same labels over gRPC, typed and raw, FP64
#    (FP32 labels are printed and compared too; rounding the inputs to
#    single precision may move a row across a class boundary, so a
#    difference there is reported, not failed);
#  - curl --data-binary with the REST binary tensor data extension gets
#    the same labels (FP64 rows as raw bytes; binary INT64 labels back).
# Usage: scripts/bench_serve_interop.sh   (PORT, GRPC_PORT to change ports)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-18090}
GRPC_PORT=${GRPC_PORT:-18091}
PY=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then kill "$server"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/kernelkit" ./cmd/kernelkit
head -n 3001 data/letter.csv > "$tmp/train.csv"
{ head -n 1 data/letter.csv; sed -n '16002,16201p' data/letter.csv; } > "$tmp/test.csv"
"$tmp/kernelkit" fit --train "$tmp/train.csv" --kernel rbf --gamma 0.0625 --features 256 \
  --lambda 0.5 --seed 1 --model "$tmp/letter.kk" >/dev/null
"$tmp/kernelkit" predict --model "$tmp/letter.kk" --data "$tmp/test.csv" --out "$tmp/predict.csv" 2>/dev/null
tail -n +2 "$tmp/predict.csv" | cut -d, -f1 > "$tmp/want.txt"
"$tmp/kernelkit" serve --model "$tmp/letter.kk" --addr "127.0.0.1:$PORT" --grpc-addr "$GRPC_PORT" --log-level warn &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/v2/health/ready" >/dev/null && break; sleep 0.1; done
status=0
mkdir "$tmp/py"
"$PY" serve/testdata/oip_client.py serve/oippb "127.0.0.1:$GRPC_PORT" letter "$tmp/test.csv" "$tmp/py"
for name in FP64-typed FP64-raw FP32-typed FP32-raw; do
  if cmp -s "$tmp/want.txt" "$tmp/py/$name.txt"; then
    echo "gRPC (Python grpcio $("$PY" -c 'import grpc; print(grpc.__version__)')) $name: same labels as kernelkit predict on $(wc -l < "$tmp/want.txt") rows"
  else
    diffs=$(paste -d' ' "$tmp/want.txt" "$tmp/py/$name.txt" | awk '$1 != $2' | wc -l)
    echo "gRPC $name: $diffs of $(wc -l < "$tmp/want.txt") labels differ from kernelkit predict"
    if [[ $name == FP64-* ]]; then status=1; fi
  fi
done

# REST binary tensor data extension with curl: the JSON header, then the
# 200×16 FP64 values as little-endian bytes.
"$PY" - "$tmp/test.csv" "$tmp/body.bin" "$tmp/hlen.txt" <<'PYEOF'
import csv, json, struct, sys
rows = [[float(v) for v in r[:-1]] for r in list(csv.reader(open(sys.argv[1])))[1:]]
flat = [v for r in rows for v in r]
binary = struct.pack("<%dd" % len(flat), *flat)
header = json.dumps({"inputs": [{"name": "input", "shape": [len(rows), len(rows[0])], "datatype": "FP64",
                                 "parameters": {"binary_data_size": len(binary)}}],
                     "parameters": {"binary_data_output": True}}).encode()
open(sys.argv[2], "wb").write(header + binary)
open(sys.argv[3], "w").write(str(len(header)))
PYEOF
curl -sf -D "$tmp/headers.txt" -o "$tmp/resp.bin" -H "Content-Type: application/octet-stream" \
  -H "Inference-Header-Content-Length: $(cat "$tmp/hlen.txt")" \
  --data-binary "@$tmp/body.bin" "http://127.0.0.1:$PORT/v2/models/letter/infer"
rhlen=$(tr -d '\r' < "$tmp/headers.txt" | awk -F': ' 'tolower($1) == "inference-header-content-length" {print $2}')
"$PY" - "$tmp/resp.bin" "$rhlen" > "$tmp/rest.txt" <<'PYEOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read(); h = int(sys.argv[2])
out = json.loads(b[:h])["outputs"][0]
size = out["parameters"]["binary_data_size"]
print("\n".join(str(v) for v in struct.unpack("<%dq" % (size // 8), b[h:h + size])))
PYEOF
if cmp -s "$tmp/want.txt" "$tmp/rest.txt"; then
  echo "REST binary extension (curl $(curl --version | head -n 1 | cut -d' ' -f2) --data-binary): same labels as kernelkit predict on $(wc -l < "$tmp/want.txt") rows"
else
  echo "REST binary extension: labels differ from kernelkit predict"; status=1
fi
kill -TERM "$server"
wait "$server" || status=$?
server=
exit "$status"
