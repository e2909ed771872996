#!/usr/bin/env bash
# fuzz/ci-fuzz.sh SECONDS [TARGET...]: the time-boxed fuzzing campaign CI runs (DESIGN §10).
#
# 1. `wbcheck fuzz --placement early` for EARLY_SECONDS (default SECONDS): generated programs
#    against the oracle, shrunk findings written to $WORK_DIR/wbcheck-fuzz/.
# 2. For each libFuzzer target of fuzz/targets.txt (or those named), SECONDS of libFuzzer
#    (fork mode, its .options, the dictionary) on a work corpus made of the seed corpus and the
#    cached corpus ($CORPUS_DIR/<target>); then -merge=1 adds the work corpus's new coverage to
#    the cached corpus, so that the next run starts from it.
# 3. Every crash, timeout or OOM is reduced: the replay driver's --print writes the program the
#    input denotes, `wbcheck shrink` reduces an `early != S_par` finding, the driver's own
#    --shrink every other property; the result goes to corpus/regressions/ with a header naming
#    the property. Inputs that denote no program (the reader itself failed) go to
#    fuzz/corpus/<seed dir>/regressions/ as raw bytes, which the replay tests then cover.
# Every finding is printed (the program and the command that replays it); the summary gives
# each step's execs, exec/s, coverage, corpus sizes and wall time. Exit 1 on any finding.
#
# Environment:
#   BUILD_DIR     clang build with WBCHECK_FUZZ=ON (default build-fuzz; configured and built
#                 here, fuzz-only, if missing)
#   WBCHECK       the wbcheck binary for step 1 and for shrinking (default build/cli/wbcheck)
#   CORPUS_DIR    the cached corpus, one directory per target (default .cache/fuzz-corpus):
#                 keep it between CI runs (fuzz/README.md, "CI")
#   WORK_DIR      scratch (default $BUILD_DIR/ci-fuzz)
#   FORK          libFuzzer -fork jobs (default 2)
#   EARLY_SECONDS seconds of step 1 (default SECONDS; 0 skips it)
#   EARLY_PLACEMENT  the placement step 1 checks (default early; another one shows a finding)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/ci-fuzz.sh SECONDS [TARGET...]   (targets: fuzz/targets.txt)" >&2
  exit 2
fi
seconds=$1
shift

# Targets and seed directories (fuzz/targets.txt).
declare -A seed_dirs
all_targets=()
while read -r target dirs; do
  [ -z "$target" ] || [[ $target == \#* ]] && continue
  all_targets+=("$target")
  seed_dirs[$target]=$dirs
done <fuzz/targets.txt
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [ -n "${seed_dirs[$t]:-}" ] || { echo "ci-fuzz: unknown target $t (fuzz/targets.txt)" >&2; exit 2; }
done

build_dir=${BUILD_DIR:-build-fuzz}
work_dir=${WORK_DIR:-$build_dir/ci-fuzz}
corpus_dir=${CORPUS_DIR:-.cache/fuzz-corpus}
fork=${FORK:-2}
early_seconds=${EARLY_SECONDS:-$seconds}
early_placement=${EARLY_PLACEMENT:-early}
wbcheck=${WBCHECK:-build/cli/wbcheck}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }

# --- build ----------------------------------------------------------------------------------
if ! command -v clang++ >/dev/null; then
  echo "ci-fuzz: clang++ not found (libFuzzer needs clang; scripts/setup.sh installs it)" >&2
  exit 2
fi
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DWBCHECK_FUZZ=ON -DWBCHECK_CLI=OFF \
        -DWBCHECK_TESTS=OFF -DWBCHECK_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
replays=()
for t in "${targets[@]}"; do replays+=("${t}_replay"); done
# The targets over text programs, one property group each: still_fails replays every program
# finding with all of them.
text_program_replays=(text_program_fuzzer_replay text_placement_fuzzer_replay text_memplan_fuzzer_replay
                      text_model_fuzzer_replay)
for r in "${text_program_replays[@]}"; do
  [[ " ${replays[*]} " == *" $r "* ]] || replays+=("$r")
done
mkdir -p "$work_dir"
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" "${replays[@]}" >"$work_dir/build.log" 2>&1 ||
  { tail -30 "$work_dir/build.log" >&2; echo "ci-fuzz: build failed" >&2; exit 2; }
has_shrink=0
if [ -x "$wbcheck" ] && "$wbcheck" shrink --help >/dev/null 2>&1; then has_shrink=1; fi

summary=()
findings=0
reports=()  # what each finding is: printed at the end, after the summary

# --- 1. wbcheck fuzz ------------------------------------------------------------------------
if [ "$early_seconds" -gt 0 ]; then
  if [ ! -x "$wbcheck" ]; then
    echo "ci-fuzz: $wbcheck not found (build/ with the CLI, or WBCHECK=...): cannot run wbcheck fuzz" >&2
    exit 2
  fi
  out="$work_dir/wbcheck-fuzz"
  rm -rf "$out" && mkdir -p "$out"
  echo "ci-fuzz: wbcheck fuzz --placement $early_placement for ${early_seconds}s"
  start=$(now)
  set +e
  nice -n 10 "$wbcheck" fuzz --time "$early_seconds" --placement "$early_placement" --jobs "$fork" --out "$out" \
    >"$out.log" 2>&1
  rc=$?
  set -e
  line=$(grep -E '^placement .* cases in' "$out.log" | head -1 || true)
  summary+=("wbcheck fuzz --placement $early_placement: ${line:-see $out.log}, exit $rc, $(elapsed "$start") s")
  if [ $rc -ne 0 ]; then
    shopt -s nullglob
    artifacts=("$out"/*.txt)
    shopt -u nullglob
    if [ ${#artifacts[@]} -eq 0 ]; then
      findings=$((findings + 1))
      summary+=("  wbcheck fuzz exited $rc without a finding file: see $out.log")
    fi
    for a in "${artifacts[@]}"; do
      findings=$((findings + 1))
      summary+=("  finding: $a")
      reports+=("==== finding of wbcheck fuzz: $a (its '# replay:' line reproduces it) ====
$(cat "$a")")
    done
  fi
fi

# --- 2. libFuzzer targets -------------------------------------------------------------------

# The seed corpus of a target: its directories (for corpus/, the *.txt program files).
copy_seeds() {
  local target=$1 into=$2 dir
  for dir in ${seed_dirs[$target]}; do
    if [ "$dir" = corpus ]; then
      find corpus -type f -name '*.txt' | while read -r f; do cp "$f" "$into/corpus_$(echo "$f" | tr '/' '_')"; done
    else
      find "$dir" -type f | while read -r f; do cp "$f" "$into/$(echo "$f" | tr '/' '_')"; done
    fi
  done
}

# Whether the program file $2 still shows the failure named $1 (oracle seed $3) when read back.
still_fails() {
  local property=$1 file=$2 seed=$3
  if [[ $property == "early != S_par" || $property == "early failed" ]]; then
    [ -x "$wbcheck" ] || return 0  # cannot tell: keep the file
    ! "$wbcheck" check "$file" --placement early --seed "$seed" --inputs 2 >/dev/null 2>&1
  else
    local driver
    for driver in "${text_program_replays[@]}"; do
      [ -x "$build_dir/fuzz/$driver" ] || return 0
      "$build_dir/fuzz/$driver" "$file" >/dev/null 2>&1 || return 0
    done
    return 1
  fi
}

# The replay driver over text programs that checks the property group of target $1: a text
# target's own, and text_X for the generator's X (the same group over the printed program;
# text_model_fuzzer does the round trip of read programs).
text_replay_of() {
  case $1 in
    text_*) echo "${1}_replay" ;;
    round_trip_fuzzer) echo text_model_fuzzer_replay ;;
    *) echo "text_${1}_replay" ;;
  esac
}

# Writes a regression file for one crashing input of target $1; adds a summary line and a
# report (runs in this shell, not a subshell: it appends to the arrays).
reduce_crash() {
  local target=$1 crash=$2
  local replay="$build_dir/fuzz/${target}_replay"
  local sha raw_dir
  sha=$(sha1sum "$crash" | cut -c1-8)
  local tmp="$work_dir/$target/reduce-$sha"
  mkdir -p "$tmp"
  # The failure as the replay driver (no libFuzzer, same sanitizers) reports it.
  "$replay" "$crash" >"$tmp/replay.log" 2>&1 || true
  if ! "$replay" --print "$crash" >"$tmp/program.txt" 2>"$tmp/print.log"; then
    # No program (the reader itself failed, or a reader target): keep the raw input.
    raw_dir="$(echo "${seed_dirs[$target]}" | cut -d' ' -f1)/regressions"
    mkdir -p "$raw_dir"
    cp "$crash" "$raw_dir/crash-$sha"
    summary+=("  finding: $raw_dir/crash-$sha (raw input, replay: $replay $raw_dir/crash-$sha)")
    reports+=("==== finding of $target: $raw_dir/crash-$sha (raw input) ====
replay: $replay $raw_dir/crash-$sha   (or $build_dir/fuzz/$target $raw_dir/crash-$sha)
$(tail -40 "$tmp/replay.log")")
    return
  fi
  # The property that fails, as the target's abort message named it.
  local property
  property=$(sed -n 's/^==== wbcheck fuzz: property violated: \(.*\) ====$/\1/p' "$tmp/replay.log" | head -1)
  [ -n "$property" ] || property="crash (see $crash)"
  local name="fuzz_${target}_$sha.txt"
  [[ $property == early* ]] && name="early_fuzz_$sha.txt"
  local out="corpus/regressions/$name"
  local how replay_cmd
  # wbcheck shrink keeps an oracle verdict; every other property is kept by the driver's own.
  if [ $has_shrink = 1 ] && [ "$property" = "early != S_par" ] &&
     "$wbcheck" shrink "$tmp/program.txt" --placement early --out "$tmp/shrunk.txt" >"$tmp/shrink.log" 2>&1; then
    how="shrunk by wbcheck shrink"
    grep -v '^#' "$tmp/shrunk.txt" >"$tmp/body.txt"
  elif "$replay" --shrink "$crash" >"$tmp/shrunk.txt" 2>"$tmp/shrink.log"; then
    how="shrunk by ${target}_replay --shrink"
    cp "$tmp/shrunk.txt" "$tmp/body.txt"
  else
    how="not shrunk (the failure does not reproduce outside libFuzzer)"
    cp "$tmp/program.txt" "$tmp/body.txt"
  fi
  local seed
  seed=$(sed -n 's/^# seed: //p' "$tmp/program.txt" | head -1)
  if [[ $property == "early != S_par" || $property == "early failed" ]]; then
    replay_cmd="$wbcheck check $out --placement early --seed ${seed:-0} --inputs 2"
  else
    replay_cmd="$build_dir/fuzz/$(text_replay_of "$target") $out"
  fi
  # The file must still fail as written: printing a program can lose the failure (a writer bug
  # once did). A shrunk file that passes falls back to the unshrunk program, and one that passes
  # too to the raw input.
  if ! still_fails "$property" "$tmp/body.txt" "${seed:-0}"; then
    if [ "$how" != "not shrunk (the failure does not reproduce outside libFuzzer)" ] &&
       still_fails "$property" "$tmp/program.txt" "${seed:-0}"; then
      how="not shrunk (the shrunk program no longer failed when read back)"
      cp "$tmp/program.txt" "$tmp/body.txt"
    else
      raw_dir="$(echo "${seed_dirs[$target]}" | cut -d' ' -f1)/regressions"
      mkdir -p "$raw_dir"
      cp "$crash" "$raw_dir/crash-$sha"
      summary+=("  finding: $raw_dir/crash-$sha ($property; raw input: its printed program does not fail)")
      reports+=("==== finding of $target: $property (raw input; the printed program does not fail) ====
replay: $replay $raw_dir/crash-$sha
$(tail -40 "$tmp/replay.log")")
      return
    fi
  fi
  {
    echo "# $property: found by fuzz/ci-fuzz.sh ($target, $(date -u +%Y-%m-%d)), $how."
    echo "# Raw input: sha1 $(sha1sum "$crash" | cut -d' ' -f1); replay: $replay_cmd"
    cat "$tmp/body.txt"
  } >"$out"
  summary+=("  finding: $out ($property; $how)")
  reports+=("==== finding of $target: $property ====
replay: $replay_cmd
raw input: $replay $crash
$(cat "$out")")
}

for target in "${targets[@]}"; do
  fuzzer="$build_dir/fuzz/$target"
  dir="$work_dir/$target"
  cache="$corpus_dir/$target"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts" "$cache"
  copy_seeds "$target" "$dir/corpus"
  cp -r "$cache/." "$dir/corpus/" 2>/dev/null || true
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
  echo "ci-fuzz: $target for ${seconds}s (fork=$fork, $seeds seeds and cached inputs)"
  start=$(now)
  set +e
  nice -n 10 "$fuzzer" "${flags[@]}" "$dir/corpus" >"$dir/log" 2>&1
  rc=$?
  set -e
  fuzz_time=$(elapsed "$start")
  # Fork mode prints "#execs: cov: C ft: F corp: N exec/s E oom/timeout/crash: a/b/c time: Ts".
  last=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -1 || true)
  execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
  eps=$(echo "$last" | sed -n 's/.* exec\/s:* \([0-9]*\).*/\1/p')
  oom_to_crash=$(echo "$last" | sed -n 's/.* oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
  # New coverage into the cache: -merge=1 keeps the inputs that add coverage to what is there.
  start=$(now)
  before=$(find "$cache" -type f | wc -l)
  set +e
  nice -n 10 "$fuzzer" -merge=1 -print_funcs=0 -artifact_prefix="$dir/artifacts/merge-" "$cache" "$dir/corpus" \
    >"$dir/merge.log" 2>&1
  merge_rc=$?
  set -e
  after=$(find "$cache" -type f | wc -l)
  crashes=()
  while IFS= read -r -d '' f; do crashes+=("$f"); done < <(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' -o -name 'merge-*' \) -print0)
  summary+=("$target: ${execs:-?} execs, ${eps:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus $seeds -> ${corp:-?}, oom/timeout/crash ${oom_to_crash:-?}, exit $rc, ${fuzz_time} s; cache $before -> $after inputs (merge exit $merge_rc, $(elapsed "$start") s)")
  for crash in "${crashes[@]}"; do
    findings=$((findings + 1))
    reduce_crash "$target" "$crash"
  done
  if [ $rc -ne 0 ] && [ ${#crashes[@]} -eq 0 ]; then
    findings=$((findings + 1))
    summary+=("  libFuzzer exited $rc without an artifact: see $dir/log")
  fi
  if [ $merge_rc -ne 0 ] && [ ${#crashes[@]} -eq 0 ]; then
    findings=$((findings + 1))
    summary+=("  the merge exited $merge_rc: see $dir/merge.log")
  fi
done

echo
echo "ci-fuzz summary (${seconds}s per target, cached corpus $corpus_dir):"
printf '  %s\n' "${summary[@]}"
echo "  findings: $findings"
for r in "${reports[@]}"; do
  echo
  echo "$r"
done
[ $findings -eq 0 ]
