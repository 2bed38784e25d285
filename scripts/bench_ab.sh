#!/usr/bin/env bash
# bench_ab.sh — one Go benchmark at two commits, side by side.
#
#   scripts/bench_ab.sh REV_A REV_B PKG BENCH [ROUNDS] [BENCHTIME]
#
# Builds the test binary of package PKG (e.g. ./native) at REV_A and at
# REV_B (any git revision; "WORKTREE" for the working tree as it is), then
# runs benchmark BENCH (a -test.bench pattern) with the two binaries
# alternately ROUNDS times (default 4; -test.benchtime BENCHTIME, default
# 4x), so that a change in the machine's speed during the comparison (a
# shared VM, other jobs) falls on both alike. Prints every run's ns/op and,
# per benchmark and binary, the minimum and median; the minimum is the
# figure least disturbed by other processes.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 REV_A REV_B PKG BENCH [ROUNDS] [BENCHTIME]" >&2; exit 2; }
a=$1 b=$2 pkg=$3 bench=$4 rounds=${5:-4} bt=${6:-4x}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree prune; rm -rf "$tmp"' EXIT
build() { # build REV NAME
  if [ "$1" = WORKTREE ]; then
    (cd "$root" && go test -c -o "$tmp/$2.test" "$pkg")
  else
    git -C "$root" worktree add -q --detach "$tmp/src-$2" "$1"
    (cd "$tmp/src-$2" && go test -c -o "$tmp/$2.test" "$pkg")
    git -C "$root" worktree remove --force "$tmp/src-$2"
  fi
}
build "$a" A
build "$b" B
dir=$root/$pkg # benchmarks may read testdata relative to their package
for i in $(seq "$rounds"); do
  for v in A B; do
    (cd "$dir" && "$tmp/$v.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$bt" 2>>"$tmp/stderr") |
      awk -v v=$v '/^Benchmark/ {print v, $1, $3}'
  done
done | tee "$tmp/runs"
sort -u "$tmp/stderr" | sed 's/^/# /'
echo "# A = $a, B = $b: minimum and median ns/op over $rounds runs"
sort -k2,2 -k1,1 -k3,3n "$tmp/runs" | awk '
  { k = $1 " " $2; v[k, ++n[k]] = $3; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
  END { for (i = 1; i <= m; i++) { k = order[i]; c = n[k]; med = (c % 2) ? v[k, (c+1)/2] : (v[k, c/2] + v[k, c/2+1]) / 2
        printf "%s min %.4g median %.4g\n", k, v[k, 1], med } }'
