#!/usr/bin/env bash
# fuzz/speed.sh TARGET [SECONDS] [RUNS]: how fast one libFuzzer target runs, as fuzz/README.md
# reports it: one process (no fork), SECONDS (default 60) from a fresh copy of its seed corpus,
# its .options and dictionary, -print_final_stats=1; RUNS times (default 1). Per run it prints
# libFuzzer's average_exec_per_sec, the executions, the CPU seconds the process got and the
# executions per CPU second (what the target costs, whatever else the machine runs), the
# coverage (edges) and features at the end, and the load average before and after.
#
# Environment: BUILD_DIR (default build-fuzz), WORK_DIR (default $BUILD_DIR/speed).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: fuzz/speed.sh TARGET [SECONDS] [RUNS]}
seconds=${2:-60}
runs=${3:-1}
build_dir=${BUILD_DIR:-build-fuzz}
work=${WORK_DIR:-$build_dir/speed}/$target
dirs=$(awk -v t="$target" '$1 == t { $1 = ""; print }' fuzz/targets.txt)
[ -n "$dirs" ] || { echo "speed: unknown target $target (fuzz/targets.txt)" >&2; exit 2; }

flags=(-max_total_time="$seconds" -print_final_stats=1 -print_funcs=0)
while IFS='=' read -r key value; do
  key=$(echo "$key" | tr -d ' '); value=$(echo "$value" | tr -d ' ')
  [ -z "$key" ] || [[ $key == \#* ]] || [[ $key == \[* ]] || {
    [ "$key" = dict ] && value="fuzz/$value"
    flags+=("-$key=$value")
  }
done <"fuzz/$target.options"

for run in $(seq 1 "$runs"); do
  rm -rf "$work" && mkdir -p "$work/corpus"
  for dir in $dirs; do
    if [ "$dir" = corpus ]; then
      find corpus -type f -name '*.txt' | while read -r f; do cp "$f" "$work/corpus/corpus_$(echo "$f" | tr '/' '_')"; done
    else
      find "$dir" -type f | while read -r f; do cp "$f" "$work/corpus/$(echo "$f" | tr '/' '_')"; done
    fi
  done
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f '%U %S' -o "$work/time" "$build_dir/fuzz/$target" "${flags[@]}" "$work/corpus" >"$work/log" 2>&1 || {
    tail -20 "$work/log" >&2
    echo "speed: $target failed (log: $work/log)" >&2
    exit 1
  }
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
  cpu=$(awk '{ printf "%.1f", $1 + $2 }' "$work/time")
  per_cpu=$(awk -v e="$execs" -v c="$cpu" 'BEGIN { if (c > 0) printf "%.0f", e / c; else print 0 }')
  final=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log" | tail -1 || true)
  cov=$(echo "$final" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$final" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  echo "$target run $run: ${seconds}s, average_exec_per_sec $eps, $execs execs in $cpu CPU s ($per_cpu per CPU s), cov $cov, ft $ft, load $load_before -> $load_after"
done
