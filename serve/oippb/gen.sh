#!/usr/bin/env bash
# Regenerates open_inference_grpc.pb.go and open_inference_grpc_grpc.pb.go
# from open_inference_grpc.proto, the Open Inference Protocol's gRPC
# service as published in kserve/open-inference-protocol
# (specification/protocol/open_inference_grpc.proto at commit
# d49cc23f89d709d87b210ef9449e273ae243984e, vendored unchanged).
#
# The generators are pinned: protoc 3.21.12 (Debian 12's protobuf-compiler:
# apt-get install protobuf-compiler) and the Go plugins at the versions
# below, run with go run. The output names the versions it was made with.
#
#   bash serve/oippb/gen.sh            # rewrite the generated files
#   bash serve/oippb/gen.sh OUTDIR     # write them to OUTDIR instead (CI compares)
set -euo pipefail
PROTOC_VERSION="libprotoc 3.21.12"
PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.1
GO_PACKAGE="github.com/kernelkit/kernelkit/serve/oippb;oippb"

here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
if [ "$(protoc --version)" != "$PROTOC_VERSION" ]; then
  echo "gen.sh: want protoc \"$PROTOC_VERSION\" (Debian 12's protobuf-compiler), have \"$(protoc --version)\"" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# protoc runs plugins as executables: each one is a go run of the pinned
# version.
printf '#!/bin/sh\nexec go run %s "$@"\n' "$PROTOC_GEN_GO" > "$tmp/protoc-gen-go"
printf '#!/bin/sh\nexec go run %s "$@"\n' "$PROTOC_GEN_GO_GRPC" > "$tmp/protoc-gen-go-grpc"
chmod +x "$tmp/protoc-gen-go" "$tmp/protoc-gen-go-grpc"
# Download the plugins first, so that protoc does not time out on them.
(cd "$tmp" && GOFLAGS=-mod=mod go run "$PROTOC_GEN_GO" --version >/dev/null && GOFLAGS=-mod=mod go run "$PROTOC_GEN_GO_GRPC" --version >/dev/null)
mkdir -p "$out"
protoc --proto_path="$here" \
  --plugin=protoc-gen-go="$tmp/protoc-gen-go" --plugin=protoc-gen-go-grpc="$tmp/protoc-gen-go-grpc" \
  --go_out="$out" --go_opt=paths=source_relative --go_opt="Mopen_inference_grpc.proto=$GO_PACKAGE" \
  --go-grpc_out="$out" --go-grpc_opt=paths=source_relative --go-grpc_opt="Mopen_inference_grpc.proto=$GO_PACKAGE" \
  open_inference_grpc.proto
