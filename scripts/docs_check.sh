#!/usr/bin/env bash
# The docs check (issue 27), run by .ci/run:
#  1. every relative link in README.md and docs/*.md resolves, #anchors
#     included (scripts/docs_links.go), and every Go file a Go comment
#     names exists (scripts/file_refs.go);
#  2. the README's quick start runs: its commands are read from the first
#     ```sh block under "## Quick start" and run as written, from the
#     repository root. `go vet ./... && go test ./...` is skipped unless
#     DOCS_CHECK_FULL=1, since CI runs exactly that already. The demo's plot,
#     kernelkit-demo.png, is a tracked file: it is set aside and put back, so
#     the check leaves the tree as it found it, and must have been written.
# DOCS_CHECK_LINKS_ONLY=1 runs step 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "-- links in README.md and docs/*.md"
go run scripts/docs_links.go README.md docs/*.md
echo "-- Go files named in Go comments"
go run scripts/file_refs.go .

[ "${DOCS_CHECK_LINKS_ONLY:-}" = 1 ] && exit 0

echo "-- quick start"
mapfile -t cmds < <(awk '/^## Quick start/{q=1} q&&/^```sh/{f=1;next} f&&/^```/{exit} f&&NF' README.md)
if [ "${#cmds[@]}" -eq 0 ]; then
  echo "docs_check: no \`\`\`sh block under '## Quick start' in README.md"
  exit 1
fi
tmp=$(mktemp -d)
trap 'if [ -e "$tmp/kernelkit-demo.png" ]; then mv -f "$tmp/kernelkit-demo.png" kernelkit-demo.png; fi; rm -rf "$tmp"' EXIT
[ -e kernelkit-demo.png ] && cp -p kernelkit-demo.png "$tmp/kernelkit-demo.png"
touch "$tmp/start"
for c in "${cmds[@]}"; do
  if [ "$c" = "go vet ./... && go test ./..." ] && [ "${DOCS_CHECK_FULL:-}" != 1 ]; then
    echo "\$ $c   (skipped: CI runs it; DOCS_CHECK_FULL=1 runs it here)"
    continue
  fi
  echo "\$ $c"
  if ! bash -euo pipefail -c "$c" > "$tmp/out" 2>&1; then
    cat "$tmp/out"
    echo "docs_check: quick-start command failed: $c"
    exit 1
  fi
  tail -n 3 "$tmp/out"
done
if grep -q 'kernelkit demo' <<<"${cmds[*]}" && ! [ kernelkit-demo.png -nt "$tmp/start" ]; then
  echo "docs_check: the demo did not write kernelkit-demo.png"
  exit 1
fi
echo "docs_check: ok"
