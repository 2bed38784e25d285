#!/usr/bin/env bash
# Read throughput of the HIGGS-shaped synthetic set (scripts/synth.go,
# 880,000 rows × 28 features and a label) as CSV against Parquet, in
# memory (data.Open, as fit reads its training file) and streamed (one
# pass of fit --stream: model.StreamFile's opener, batches of 16384 rows),
# with the peak resident memory of each run (/usr/bin/time -v). Each
# measurement runs REPEAT times (default 3) in a fresh process; the table
# gives the median rows a second and the largest peak. Run from the
# repository root:
#
#   bash scripts/parquet_bench.sh            # ROWS=880000 REPEAT=3
#   ROWS=220000 REPEAT=1 bash scripts/parquet_bench.sh
#
# The Parquet file is the CSV file's columns as DOUBLE (data.WriteParquet:
# Snappy, row groups of 65536 rows). Files go to a temporary directory,
# removed at the end (about 450 MB at 880,000 rows).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-880000}
repeat=${REPEAT:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" scripts/parquet_bench.go
go run scripts/synth.go --rows "$rows" --out "$tmp/higgs.csv" > /dev/null
"$tmp/bench" convert "$tmp/higgs.csv" "$tmp/higgs.parquet"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%d)"
echo "files: CSV $(($(stat -c %s "$tmp/higgs.csv") / 1048576)) MiB, Parquet $(($(stat -c %s "$tmp/higgs.parquet") / 1048576)) MiB, $rows rows"
echo
echo "| file | reading | rows/s (median of $repeat) | seconds | peak RSS |"
echo "|---|---|---|---|---|"
declare -A rate
for file in higgs.csv higgs.parquet; do
  for mode in memory stream; do
    flag=""
    [ "$mode" = stream ] && flag="--stream"
    rates=() secs=() peak=0
    for _ in $(seq "$repeat"); do
      # shellcheck disable=SC2086
      /usr/bin/time -v "$tmp/bench" read $flag "$tmp/$file" > "$tmp/out.json" 2> "$tmp/time.txt"
      rates+=("$(sed -E 's/.*"rows_per_s":([0-9.e+]+).*/\1/' "$tmp/out.json")")
      secs+=("$(sed -E 's/.*"seconds":([0-9.e+]+).*/\1/' "$tmp/out.json")")
      kb=$(awk -F': ' '/Maximum resident set size/{print $2}' "$tmp/time.txt")
      [ "$kb" -gt "$peak" ] && peak=$kb
    done
    med=$(printf '%s\n' "${rates[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    sec=$(printf '%s\n' "${secs[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    rate[$file.$mode]=$med
    printf '| %s | %s | %.0f | %.2f | %d MiB |\n' "${file#higgs.}" "$mode" "$med" "$sec" $((peak / 1024))
  done
done
echo
awk -v m="${rate[higgs.parquet.memory]}" -v mc="${rate[higgs.csv.memory]}" -v s="${rate[higgs.parquet.stream]}" -v sc="${rate[higgs.csv.stream]}" \
  'BEGIN { printf "Parquet against CSV: %.1f× in memory, %.1f× streamed\n", m / mc, s / sc }'
