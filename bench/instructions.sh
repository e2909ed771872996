#!/usr/bin/env bash
# Issue 4's figure in instructions per check (deterministic), by callgrind on
# bench/check_instructions: bash bench/instructions.sh [BUILD_DIR (default build-release)] [CHECKS (default 900)]
# Needs valgrind (apt-get install valgrind) and a Release build of check_instructions.
# CALLGRIND_OUT=FILE keeps the profile (callgrind_annotate --inclusive=yes FILE; divide by CHECKS).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-release}
checks=${2:-900}
exe="$build_dir/bench/check_instructions"
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[ -x "$exe" ] || { echo "instructions.sh: no $exe (ninja -C $build_dir check_instructions)" >&2; exit 2; }
out=${CALLGRIND_OUT:-}
if [ -z "$out" ]; then
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
fi
log=$(valgrind --tool=callgrind --toggle-collect='wb::bench::measuredChecks*' --callgrind-out-file="$out" "$exe" "$checks" 2>&1) || {
  echo "$log" >&2
  exit 1
}
collected=$(echo "$log" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
[ -n "$collected" ] || { echo "$log" >&2; echo "instructions.sh: callgrind printed no count" >&2; exit 1; }
echo "$log" | grep "placement bugs" || true
echo "instructions per check: $((collected / checks)) (callgrind, $checks checks${CALLGRIND_OUT:+; profile in $CALLGRIND_OUT})"
