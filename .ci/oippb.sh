#!/usr/bin/env bash
# Checks that the generated gRPC code in serve/oippb is what gen.sh makes
# from the vendored proto at the pinned generator versions: installs
# Debian's protobuf-compiler if protoc is missing, regenerates into a
# temporary folder and compares.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v protoc >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq protobuf-compiler >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash serve/oippb/gen.sh "$tmp"
for f in open_inference_grpc.pb.go open_inference_grpc_grpc.pb.go; do
  if ! cmp -s "$tmp/$f" "serve/oippb/$f"; then
    echo "serve/oippb/$f is not what serve/oippb/gen.sh generates; run: bash serve/oippb/gen.sh" >&2
    diff -u "serve/oippb/$f" "$tmp/$f" | head -n 40 >&2 || true
    exit 1
  fi
done
echo "serve/oippb: generated code up to date"
