#!/usr/bin/env bash
# bench/passcmd_first_find.sh [BUILD_DIR] [PASS_CMD...]: wall time of `wbcheck fuzz --pass-cmd
# CMD --until-found` (the first finding, shrunk and written) for seeds 1..10, and their median
# (issue 19's target: under 10 s for the one-shot Python adapter of upstream's pass). Extra
# arguments go to `wbcheck fuzz` (e.g. --persistent).
set -euo pipefail
build=${1:-build}
shift || true
here=$(cd "$(dirname "$0")/.." && pwd)
cmd=${PASS_CMD:-python3 $here/tools/adapters/upstream_end.py}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
times=()
for seed in $(seq 1 10); do
  start=$(date +%s.%N)
  "$build/cli/wbcheck" fuzz --pass-cmd "$cmd" --until-found --seed "$seed" --time 300 --no-draw --out "$out/$seed" "$@" \
    >/dev/null || true
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc)
  nodes=$(grep -h '^# shrunk:' "$out/$seed"/*.txt 2>/dev/null | head -1 | sed 's/# shrunk: //')
  hazard=$(grep -h '^# hazard class:' "$out/$seed"/*.txt 2>/dev/null | head -1 | sed 's/# hazard class: //')
  printf 'seed %2d: %6.2f s  %s (%s)\n' "$seed" "$t" "$hazard" "$nodes"
  times+=("$t")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median: %.2f s\n", (a[5]+a[6])/2}'
