#!/usr/bin/env bash
# fuzz/cflite-check.sh: .clusterfuzzlite/build.sh run by hand with the OSS-Fuzz variables (the
# ones ClusterFuzzLite's base-builder sets for the address sanitizer), then every fuzzer it
# wrote into $OUT must start, run RUNS (default 1000) executions from its seed corpus zip with
# its .options (and dictionary) as ClusterFuzzLite passes them, and exit 0. CI runs it
# (scripts/test.sh); it fails with the fuzzer's log on the first that does not.
#
# The runs use a fixed libFuzzer -seed (SEED, default 1): this checks the build, so the same
# commit gives the same 1000 executions and the same verdict; finding bugs is ci-fuzz.sh's work
# (its seeds vary), and a finding here replays with the seed printed.
#
# Environment: CFLITE_DIR (default build-cflite: out/, work/, run/), RUNS (default 1000),
# SEED (default 1).
# CMAKE_CXX_COMPILER_LAUNCHER=ccache in the environment makes the build use ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${CFLITE_DIR:-build-cflite}
runs=${RUNS:-1000}
seed=${SEED:-1}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/out" "$dir/run"
mkdir -p "$dir/out" "$dir/work" "$dir/run"

start=$(date +%s)
flags="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
if ! CC=clang CXX=clang++ CFLAGS="$flags" CXXFLAGS="$flags -stdlib=libc++" LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
     OUT="$dir/out" SRC="$root" WORK="$dir/work" bash .clusterfuzzlite/build.sh >"$dir/build.log" 2>&1; then
  tail -40 "$dir/build.log" >&2
  echo "cflite-check: build.sh failed (log: $dir/build.log)" >&2
  exit 1
fi
echo "cflite-check: build.sh built into $dir/out in $(( $(date +%s) - start )) s"

failed=0
while read -r target _; do
  [ -z "$target" ] || [[ $target == \#* ]] && continue
  for f in "$target" "$target.options" "${target}_seed_corpus.zip"; do
    [ -e "$dir/out/$f" ] || { echo "cflite-check: build.sh wrote no $f" >&2; failed=1; }
  done
  [ -x "$dir/out/$target" ] || continue
  seeds="$dir/run/$target-seeds"
  mkdir -p "$seeds"
  (cd "$seeds" && unzip -q "$dir/out/${target}_seed_corpus.zip")
  # Counted before the run: libFuzzer adds the inputs it finds to this directory.
  seeds_count=$(find "$seeds" -type f | wc -l)
  options=()
  while IFS='=' read -r key value; do
    key=$(echo "$key" | tr -d ' '); value=$(echo "$value" | tr -d ' ')
    [ -z "$key" ] || [[ $key == \#* ]] || [[ $key == \[* ]] || {
      [ "$key" = dict ] && { [ -e "$dir/out/$value" ] || { echo "cflite-check: no $value in out/" >&2; failed=1; }; value="$dir/out/$value"; }
      options+=("-$key=$value")
    }
  done <"$dir/out/$target.options"
  t0=$(date +%s)
  set +e
  (cd "$dir/run" && "$dir/out/$target" "${options[@]}" -runs="$runs" -seed="$seed" -print_final_stats=1 "$seeds") >"$dir/run/$target.log" 2>&1
  rc=$?
  set -e
  done_line=$(grep -E "^Done $runs runs" "$dir/run/$target.log" || true)
  if [ $rc -ne 0 ] || [ -z "$done_line" ]; then
    tail -40 "$dir/run/$target.log" >&2
    echo "cflite-check: $target exited $rc (expected 0 and 'Done $runs runs'; -seed=$seed; log: $dir/run/$target.log)" >&2
    failed=1
  else
    echo "cflite-check: $target: $seeds_count seeds, $done_line (wall $(( $(date +%s) - t0 )) s)"
  fi
done <fuzz/targets.txt
[ $failed -eq 0 ]
