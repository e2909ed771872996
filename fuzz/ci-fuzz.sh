#!/usr/bin/env bash
# fuzz/ci-fuzz.sh SECONDS [TARGET...]: a time-boxed libFuzzer campaign (DESIGN §10).
#
# For each target (default: program_fuzzer text_fuzzer), for SECONDS each: copy the seed corpus
# to a work dir, run libFuzzer in fork mode with the dictionary and options, then turn every
# crash into a program file: the replay driver's --print writes the program the crashing input
# denotes, `wbcheck shrink` reduces it when that subcommand exists (else the driver's own
# --shrink, which preserves the failing property), and the result goes to corpus/regressions/
# (inputs that denote no program go to fuzz/corpus/<target>/regressions/ as raw bytes).
# Prints a summary (execs, exec/s, coverage, corpus, findings) and exits 1 on any finding.
#
# Environment: BUILD_DIR (clang build with WBCHECK_FUZZ=ON; default build-fuzz, configured and
# built here if missing), WORK_DIR (default $BUILD_DIR/ci-fuzz), FORK (default 2),
# WBCHECK (a wbcheck binary to shrink with; default: found in build/ or $BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/ci-fuzz.sh SECONDS [program_fuzzer|text_fuzzer ...]" >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(program_fuzzer text_fuzzer)

build_dir=${BUILD_DIR:-build-fuzz}
work_dir=${WORK_DIR:-$build_dir/ci-fuzz}
fork=${FORK:-2}

# --- build ----------------------------------------------------------------------------------
if ! command -v clang++ >/dev/null; then
  echo "ci-fuzz: clang++ not found (libFuzzer needs clang; scripts/setup.sh installs it)" >&2
  exit 2
fi
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DWBCHECK_FUZZ=ON \
        -DWBCHECK_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
replays=()
for t in "${targets[@]}"; do replays+=("${t}_replay"); done
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" "${replays[@]}" >"$build_dir/ci-fuzz-build.log" 2>&1 ||
  { tail -30 "$build_dir/ci-fuzz-build.log" >&2; echo "ci-fuzz: build failed" >&2; exit 2; }

wbcheck=${WBCHECK:-}
if [ -z "$wbcheck" ]; then
  for candidate in "$build_dir/cli/wbcheck" build/cli/wbcheck; do
    [ -x "$candidate" ] && { wbcheck=$candidate; break; }
  done
fi
has_shrink=0
if [ -n "$wbcheck" ] && "$wbcheck" shrink --help >/dev/null 2>&1; then has_shrink=1; fi

# --- one campaign per target ----------------------------------------------------------------
summary=()
findings=0

# Writes a regression file for one crashing input of target $1; prints what it wrote.
reduce_crash() {
  local target=$1 crash=$2
  local replay="$build_dir/fuzz/${target}_replay"
  local sha
  sha=$(sha1sum "$crash" | cut -c1-8)
  local tmp="$work_dir/$target/reduce-$sha"
  mkdir -p "$tmp"
  if ! "$replay" --print "$crash" >"$tmp/program.txt" 2>"$tmp/print.log"; then
    # No program (e.g. the reader itself crashed): keep the raw input for the replay test.
    mkdir -p "fuzz/corpus/$target/regressions"
    cp "$crash" "fuzz/corpus/$target/regressions/crash-$sha"
    echo "fuzz/corpus/$target/regressions/crash-$sha (raw input; denotes no program)"
    return
  fi
  # The property that fails, as the target's abort message named it.
  local property
  property=$("$replay" "$crash" 2>&1 | sed -n 's/^==== wbcheck fuzz: property violated: \(.*\) ====$/\1/p' | head -1)
  [ -n "$property" ] || property="crash (see $crash)"
  local name="fuzz_${target}_$sha.txt"
  [[ $property == early* ]] && name="early_fuzz_$sha.txt"
  local out="corpus/regressions/$name"
  local how
  # wbcheck shrink keeps an oracle verdict; every other property is kept by the driver's own.
  if [ $has_shrink = 1 ] && [ "$property" = "early != S_par" ] && "$wbcheck" shrink "$tmp/program.txt" --placement early --out "$tmp/shrunk.txt" >"$tmp/shrink.log" 2>&1; then
    how="shrunk by wbcheck shrink"
    grep -v '^#' "$tmp/shrunk.txt" >"$tmp/body.txt"
  elif "$replay" --shrink "$crash" >"$tmp/shrunk.txt" 2>"$tmp/shrink.log"; then
    how="shrunk by ${target}_replay --shrink"
    cp "$tmp/shrunk.txt" "$tmp/body.txt"
  else
    how="not shrunk (the failure does not reproduce outside libFuzzer's sanitizers)"
    cp "$tmp/program.txt" "$tmp/body.txt"
  fi
  {
    echo "# $property: found by fuzz/ci-fuzz.sh ($target, $(date -u +%Y-%m-%d)), $how."
    echo "# Raw input: sha1 $(sha1sum "$crash" | cut -d' ' -f1); replay with ${target}_replay."
    cat "$tmp/body.txt"
  } >"$out"
  echo "$out ($property; $how)"
}

for target in "${targets[@]}"; do
  fuzzer="$build_dir/fuzz/$target"
  dir="$work_dir/$target"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # Seed corpus: the target's own, and for text_fuzzer every program file of corpus/.
  cp -r "fuzz/corpus/$target/." "$dir/corpus/"
  if [ "$target" = text_fuzzer ]; then
    find corpus -type f -name '*.txt' | while read -r f; do cp "$f" "$dir/corpus/corpus_$(echo "$f" | tr '/' '_')"; done
  fi
  seeds=$(find "$dir/corpus" -type f | wc -l)
  flags=(-fork="$fork" -max_total_time="$seconds" -artifact_prefix="$dir/artifacts/" -print_final_stats=1
         -print_funcs=0)  # symbolising every NEW_FUNC costs more than fuzzing on 2 cores
  # The .options file holds the per-target libFuzzer flags (as ClusterFuzzLite reads them).
  while IFS='=' read -r key value; do
    key=$(echo "$key" | tr -d ' '); value=$(echo "$value" | tr -d ' ')
    [ -z "$key" ] || [[ $key == \#* ]] || [[ $key == \[* ]] || {
      [ "$key" = dict ] && value="fuzz/$value"
      flags+=("-$key=$value")
    }
  done <"fuzz/$target.options"
  echo "ci-fuzz: $target for ${seconds}s (fork=$fork, $seeds seeds)"
  set +e
  nice -n 10 "$fuzzer" "${flags[@]}" "$dir/corpus" >"$dir/log" 2>&1
  rc=$?
  set -e
  # Fork mode prints "#execs: cov: C ft: F corp: N exec/s E oom/timeout/crash: a/b/c time: Ts".
  last=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -1 || true)
  execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
  eps=$(echo "$last" | sed -n 's/.* exec\/s:* \([0-9]*\).*/\1/p')
  oom_to_crash=$(echo "$last" | sed -n 's/.* oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
  crashes=()
  while IFS= read -r -d '' f; do crashes+=("$f"); done < <(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) -print0)
  line="$target: ${execs:-?} execs, ${eps:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus $seeds -> ${corp:-?}, oom/timeout/crash ${oom_to_crash:-?}, exit $rc"
  summary+=("$line")
  for crash in "${crashes[@]}"; do
    findings=$((findings + 1))
    summary+=("  finding: $(reduce_crash "$target" "$crash")")
  done
  if [ $rc -ne 0 ] && [ ${#crashes[@]} -eq 0 ]; then
    findings=$((findings + 1))
    summary+=("  libFuzzer exited $rc without an artifact: see $dir/log")
  fi
done

echo
echo "ci-fuzz summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
echo "  findings: $findings"
[ $findings -eq 0 ]
