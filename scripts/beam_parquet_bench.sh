#!/usr/bin/env bash
# The Beam fit (kernelkit-beam fit on the Prism runner, in process) from
# Parquet shards against the same rows as CSV shards: wall-clock seconds,
# rows per second, CPU seconds and peak resident memory (/usr/bin/time
# -f %M) of each command, and the fit's passes as it reports them. The
# data are the HIGGS-shaped synthetic set (scripts/synth.go: d = 28
# features and a 0/1 label), ROWS rows split into SHARDS CSV files, each
# converted to Parquet (scripts/parquet_bench.go convert: DOUBLE columns,
# Snappy, row groups of 65536 rows). Both fits use D features, λ = 0.1,
# seed 1, and fit the same model. Run from the repository root:
#
#   scripts/beam_parquet_bench.sh                  # 200,000 rows, D = 256, 8 shards
#   ROWS=1000000 D=512 SHARDS=16 scripts/beam_parquet_bench.sh
#
# It prints the machine and its load average before and after, since a
# shared machine slows every number; the CPU seconds are the steadier
# figure there. Files go to a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-200000}
D=${D:-256}
SHARDS=${SHARDS:-8}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/csv" "$WORK/parquet"

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
go build -o "$WORK/pqbench" scripts/parquet_bench.go
(cd beam && go build -o "$WORK/kernelkit-beam" ./cmd/kernelkit-beam)
go run scripts/synth.go --rows "$ROWS" --out "$WORK/all.csv" > /dev/null
head -n 1 "$WORK/all.csv" > "$WORK/header"
per=$(( (ROWS + SHARDS - 1) / SHARDS ))
tail -n +2 "$WORK/all.csv" | split -d -a 3 -l "$per" - "$WORK/rows-"
for f in "$WORK"/rows-*; do
  s=${f##*-}
  cat "$WORK/header" "$f" > "$WORK/csv/part-$s.csv"
  rm "$f"
  "$WORK/pqbench" convert "$WORK/csv/part-$s.csv" "$WORK/parquet/part-$s.parquet" > /dev/null
done
rm "$WORK/all.csv"
echo "== $ROWS rows in $SHARDS shards: CSV $(du -sm "$WORK/csv" | cut -f1) MiB, Parquet $(du -sm "$WORK/parquet" | cut -f1) MiB; D = $D"

# run NAME GLOB: one fit, timed by /usr/bin/time.
run() {
  local name=$1 glob=$2
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "$WORK/kernelkit-beam" fit --runner prism --train "$glob" \
    --features "$D" --lambda 0.1 --seed 1 --task classification --json > "$WORK/out.json"
  read -r wall user sys rss < "$WORK/time.txt"
  awk -v name="$name" -v w="$wall" -v u="$user" -v s="$sys" -v rss="$rss" -v n="$ROWS" 'BEGIN {
    printf "| %s | %.1f | %.0f | %.1f | %.0f | %.0f |\n", name, w, n / w, u + s, n / (u + s), rss / 1024
  }'
  sed -n 's/.*"beam":\({[^}]*}\).*/  passes: \1/p' "$WORK/out.json" >&2
}
echo
echo "| input | wall s | rows/s | CPU s | rows/CPU-s | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
run "CSV shards" "$WORK/csv/*.csv"
run "Parquet shards" "$WORK/parquet/*.parquet"
echo
echo "== after: load $(cut -d' ' -f1-3 /proc/loadavg)"
