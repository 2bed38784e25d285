#!/usr/bin/env bash
# Rows per second of the Beam fit (kernelkit-beam fit on the Prism runner,
# in process) against the single-machine fits of kernelkit fit on the same
# rows and machine: in memory (model.Fit) and streamed (--stream,
# model.FitStream). The data are synthetic: ROWS rows of 16 standard normal
# features and a class label 0..9 from a fixed nonlinear rule, written as
# SHARDS CSV shards (for Beam) and as one file (for kernelkit fit); a
# 1,000-row test file is fitted on by all three. Every fit uses D features,
# λ = 0.1, seed 1, so all three fit the same model.
#
#   scripts/beam_bench.sh                 # 1,000,000 rows, D = 512, 16 shards
#   ROWS=200000 D=256 scripts/beam_bench.sh
#
# It prints the machine's load (uptime) before and after, since a shared
# machine slows every number, and for each fit the wall-clock seconds of
# the whole command (reading included), the fit seconds it reports, and
# rows per second of both.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-1000000}
D=${D:-512}
SHARDS=${SHARDS:-16}
WORK=${WORK:-$(mktemp -d)}
KEEP=${KEEP:-0}
[ "$KEEP" = 1 ] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/shards"

echo "== machine: $(nproc) cores; $(uptime)"
echo "== building kernelkit and kernelkit-beam"
go build -o "$WORK/kernelkit" ./cmd/kernelkit
(cd beam && go build -o "$WORK/kernelkit-beam" ./cmd/kernelkit-beam)

echo "== generating $ROWS rows in $SHARDS shards ($WORK)"
gen() { # gen ROWS SEED: CSV rows of 16 N(0,1) features and a label 0..9
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed); pi = 3.141592653589793
    for (i = 0; i < n; i++) {
      s = 0; line = ""
      for (j = 0; j < 16; j++) {
        u = rand(); if (u < 1e-300) u = 1e-300
        x = sqrt(-2 * log(u)) * cos(2 * pi * rand())
        s += (j % 2 ? 1 : -1) * x * x + sin(3 * x)
        line = line sprintf("%.6f,", x)
      }
      c = int(5 + s); if (c < 0) c = 0; if (c > 9) c = 9
      print line c
    }
  }'
}
header="f0,f1,f2,f3,f4,f5,f6,f7,f8,f9,f10,f11,f12,f13,f14,f15,label"
per=$(( (ROWS + SHARDS - 1) / SHARDS ))
for ((s = 0; s < SHARDS; s++)); do
  n=$(( ROWS - s * per )); [ "$n" -gt "$per" ] && n=$per
  { echo "$header"; gen "$n" $((s + 1)); } > "$WORK/shards/part-$(printf %03d "$s").csv"
done
{ echo "$header"; for f in "$WORK"/shards/part-*.csv; do tail -n +2 "$f"; done; } > "$WORK/all.csv"
{ echo "$header"; gen 1000 999; } > "$WORK/test.csv"
echo "   $(du -sh "$WORK/all.csv" | cut -f1) of CSV"

common=(--features "$D" --lambda 0.1 --seed 1 --task classification --test "$WORK/test.csv" --json)
# run NAME CMD...: runs a fit and prints its wall-clock seconds (reading
# included), the fit seconds it reports and, where /usr/bin/time exists,
# its CPU seconds (user + system), each with rows per second. On a machine
# shared with other work the CPU figure is the steadier one.
TIME=$(command -v /usr/bin/time || true)
run() {
  local name=$1; shift
  local t0 t1 out cpu=""
  t0=$(date +%s.%N)
  if [ -n "$TIME" ]; then
    out=$("$TIME" -f "%U %S" -o "$WORK/time.txt" "$@")
    cpu=$(awk '{ print $1 + $2 }' "$WORK/time.txt")
  else
    out=$("$@")
  fi
  t1=$(date +%s.%N)
  local fit acc
  fit=$(printf '%s' "$out" | sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p')
  acc=$(printf '%s' "$out" | sed -n 's/.*"test_accuracy":\([0-9.e+-]*\).*/\1/p')
  awk -v name="$name" -v t0="$t0" -v t1="$t1" -v fit="$fit" -v cpu="$cpu" -v n="$ROWS" -v acc="$acc" 'BEGIN {
    w = t1 - t0
    printf "%-40s wall %7.2f s %8.0f rows/s | fit %7.2f s %8.0f rows/s", name, w, n / w, fit, n / fit
    if (cpu != "") printf " | CPU %7.2f s %8.0f rows/CPU-s", cpu, n / cpu
    printf " | test accuracy %s\n", acc
  }'
  printf '%s\n' "$out" > "$WORK/$(echo "$name" | tr -c 'a-z0-9\n' '_').json"
}

echo "== fits at D = $D"
run "kernelkit fit (in memory)" "$WORK/kernelkit" fit --train "$WORK/all.csv" "${common[@]}"
run "kernelkit fit --stream" "$WORK/kernelkit" fit --stream --train "$WORK/all.csv" "${common[@]}"
run "kernelkit-beam fit (prism, $SHARDS shards)" "$WORK/kernelkit-beam" fit --runner prism --input "$WORK/shards/*.csv" "${common[@]}"
sed -n 's/.*"beam":\({[^}]*}\).*/   beam passes: \1/p' "$WORK"/kernelkit_beam_fit*.json
echo "== after: $(uptime)"
