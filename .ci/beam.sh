#!/usr/bin/env bash
# CI for the beam module (beam/: the Apache Beam fit, command
# kernelkit-beam). It is a Go module of its own so that the core module's
# go.mod stays free of Beam's ~330 modules; this script checks that too.
# It formats, vets and tests the module: the acceptance test splits the
# letter data into 8 shards, fits them on Beam's Prism runner (in process)
# and checks the model against model.Fit and model.FitStream. Modules come
# from the Go module proxy; the first build of Beam takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== core go.mod has no Beam dependency"
if grep -q 'github.com/apache/beam' go.mod go.sum; then
  echo "the core module depends on Beam: keep Beam inside beam/"; exit 1
fi
cd beam
go version
echo "== gofmt (beam)"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted"; exit 1; fi
echo "== go vet ./... (beam)"
go vet ./...
echo "== go test ./... (beam, Prism runner)"
go test -count=1 ./...
if [ "${BEAM_LINT:-0}" = 1 ]; then
  # The core's pinned linters over the beam module (a few more minutes on
  # a cold cache, as they load Beam's dependencies from source).
  echo "== staticcheck, errcheck (beam)"
  go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
  go run github.com/kisielk/errcheck@v1.30.0 -blank -ignoretests -exclude ../.ci/errcheck-exclude.txt ./...
fi
