#!/usr/bin/env bash
# Instructions per readProgram and per writeProgram of a small generated program (deterministic),
# by callgrind on bench/read_instructions: what a persistent pass command costs per case on top of
# the placement (bench/README.md, "passcmd").
#   bash bench/read_instructions.sh [BUILD_DIR (default build)] [PROGRAMS (default 500)]
# Needs valgrind. CALLGRIND_OUT=PREFIX keeps the profiles (PREFIX.read, PREFIX.write).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
programs=${2:-500}
exe="$build_dir/bench/read_instructions"
command -v valgrind >/dev/null || { echo "read_instructions.sh: needs valgrind" >&2; exit 2; }
[ -x "$exe" ] || { echo "read_instructions.sh: no $exe (ninja -C $build_dir read_instructions)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=${CALLGRIND_OUT:-$tmp/profile}
for what in read write; do
  function=Reads
  [ "$what" = write ] && function=Writes
  log=$(valgrind --tool=callgrind --toggle-collect="wb::bench::measured$function*" --callgrind-out-file="$prefix.$what" \
          "$exe" "$programs" 2>&1) || { echo "$log" >&2; exit 1; }
  collected=$(echo "$log" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
  texts=$(echo "$log" | sed -n 's/^\([0-9]*\) texts.*/\1/p')
  [ -n "$collected" ] && [ -n "$texts" ] || { echo "$log" >&2; exit 1; }
  [ "$what" = read ] && echo "$log" | grep ' texts '
  echo "instructions per $what: $((collected / texts))"
done
