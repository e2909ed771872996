#!/usr/bin/env bash
# bench/passcmd_throughput.sh [BUILD_DIR] [CASES]: cases per second of `wbcheck fuzz --pass-cmd`
# (issue 19) with the C++ adapter over wbcheck's placements (tools/adapters/place_adapter.cpp),
# persistent and one shot, and the Python adapter of upstream's pass persistent
# (tools/adapters/upstream_end.py --persistent), against the built-in placements in the same
# run. The same seed and case count everywhere, one job (--jobs 1): the rates compare.
#
# `early` finds nothing, so its runs time the cases alone; `upstream` finds bugs, and its runs
# include shrinking them (each candidate runs through the adapter too).
set -euo pipefail
build=${1:-build}
cases=${2:-2000}
wbcheck=$build/cli/wbcheck
adapter=$build/tools/adapters/place_adapter
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

rate() {  # the cases/s of a fuzz run's summary
  "$wbcheck" fuzz --cases "$1" --seed 1 --no-draw --out "$out/$RANDOM" "${@:2}" | sed -n 's/.*(\([0-9.]*\) cases\/s).*/\1/p'
}

printf '%-44s %10s\n' "pass under test ($cases cases, seed 1)" "cases/s"
for placement in early upstream; do
  printf '%-44s %10s\n' "built-in --placement $placement" "$(rate "$cases" --placement "$placement")"
  printf '%-44s %10s\n' "place_adapter $placement, persistent" \
    "$(rate "$cases" --pass-cmd "$adapter --placement $placement --persistent" --persistent)"
  printf '%-44s %10s\n' "place_adapter $placement, one shot" \
    "$(rate $((cases / 10)) --pass-cmd "$adapter --placement $placement")"
done
printf '%-44s %10s\n' "upstream_end.py, persistent" \
  "$(rate "$cases" --pass-cmd "python3 $here/tools/adapters/upstream_end.py --persistent" --persistent)"
