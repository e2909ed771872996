#!/usr/bin/env bash
# bench/passcmd_throughput.sh [BUILD_DIR] [CASES] [JOBS] [RUNS]: cases per second of `wbcheck fuzz
# --pass-cmd` (issue 19) with the C++ adapter over wbcheck's placements
# (tools/adapters/place_adapter.cpp), persistent and one shot, and the Python adapter of
# upstream's pass persistent (tools/adapters/upstream_end.py --persistent), against the built-in
# placements in the same run. The same seed, case count and --jobs everywhere (default 2, the
# machine's cores): the rates compare.
#
# `early` finds nothing, so its runs time the cases alone; `upstream` finds bugs (about a fifth
# of the cases diverge), and its runs include shrinking some of them (each candidate runs
# through the adapter too). For each run: the rate, the workers' time spent shrinking (fuzz's
# summary), and the rate of the cases alone, cases / (wall time - shrinking time / jobs). Each
# row is the best of RUNS runs (default 3): on a machine shared with other work, the fastest run
# is the one least disturbed.
set -euo pipefail
build=${1:-build}
cases=${2:-20000}
jobs=${3:-2}
runs=${4:-3}
wbcheck=$build/cli/wbcheck
adapter=$build/tools/adapters/place_adapter
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {  # CASES ARGS...: "rate shrink-seconds cases-alone-rate" of the fastest of RUNS fuzz runs
  for _ in $(seq "$runs"); do once "$@"; done | sort -g -k1,1 | tail -1
}

once() {  # CASES ARGS...: the same, of one run
  local summary
  summary=$("$wbcheck" fuzz --cases "$1" --seed 1 --jobs "$jobs" --no-draw --out "$out/$RANDOM" "${@:2}" || true)
  awk -v jobs="$jobs" '
    /cases\/s\)/ { match($0, /[0-9]+ cases in/); n = substr($0, RSTART, RLENGTH - 9)
                   match($0, /\([0-9.]+ cases\/s\)/); rate = substr($0, RSTART + 1, RLENGTH - 10); wall = n / rate }
    /^shrinking:/ { match($0, /in [0-9.]+ s/); shrink = substr($0, RSTART + 3, RLENGTH - 5) }
    END { alone = wall - shrink / jobs; printf "%10s %10.1f %10.0f\n", rate, shrink, (alone > 0 ? n / alone : 0) }' \
    <<<"$summary"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), --jobs $jobs, seed 1, best of $runs runs"
printf '%-44s %10s %10s %10s\n' "pass under test ($cases cases)" "cases/s" "shrink s" "alone/s"
for placement in early upstream; do
  printf '%-44s %s\n' "built-in --placement $placement" "$(run "$cases" --placement "$placement")"
  printf '%-44s %s\n' "place_adapter $placement, persistent" \
    "$(run "$cases" --pass-cmd "$adapter --placement $placement --persistent" --persistent)"
  printf '%-44s %s\n' "place_adapter $placement, one shot ($((cases / 50)) cases)" \
    "$(run $((cases / 50)) --pass-cmd "$adapter --placement $placement")"
done
printf '%-44s %s\n' "upstream_end.py, persistent" \
  "$(run "$cases" --pass-cmd "python3 $here/tools/adapters/upstream_end.py --persistent" --persistent)"
printf '%-44s %s\n' "place_adapter upstream --form 3, persistent" \
  "$(run "$cases" --pass-cmd "$adapter --placement upstream --form 3 --persistent" --persistent --pass-form 3)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
