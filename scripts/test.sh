#!/usr/bin/env bash
# Installs what is missing, builds, runs the whole test suite with ctest (and the fuzz replays
# again in the ASan+UBSan build-fuzz/), then fuzzes for a
# bounded time (fuzz/README.md, "CI"): `wbcheck fuzz` of early and each libFuzzer target from
# its corpus (fuzz/ci-fuzz.sh), and the ClusterFuzzLite build run by hand (fuzz/cflite-check.sh).
# A finding fails the run and is printed with its shrunk program and replay command.
# Environment: WBCHECK_SANITIZE=1 runs the suite in an ASan+UBSan build (build-asan/);
# WBCHECK_FUZZ_SECONDS (default 45) per libFuzzer target and for wbcheck fuzz; WBCHECK_CI_FUZZ=0
# skips the fuzzing, WBCHECK_CFLITE_CHECK=0 the ClusterFuzzLite build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${WBCHECK_SANITIZE:-0}" = 1 ]; then export BUILD_DIR=${BUILD_DIR:-build-asan}; fi
build_dir=${BUILD_DIR:-build}
steps=()
times_file=$(mktemp)
# CPU seconds (user + sys) of the finished child processes, in $cpu (`times` in this shell:
# a subshell would count its own children only).
children_cpu() {
  times >"$times_file"
  cpu=$(tail -1 "$times_file" | awk '{ for (i = 1; i <= 2; ++i) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%.0f", s }')
}
step() {  # step NAME COMMAND...: runs it, records its wall time and the CPU time it used
  local name=$1 start=$SECONDS before
  shift
  children_cpu
  before=$cpu
  "$@"
  children_cpu
  steps+=("$name: $((SECONDS - start)) s wall, $((cpu - before)) s CPU")
}
report() {
  rm -f "$times_file"
  [ ${#steps[@]} -eq 0 ] || { echo; echo "test.sh steps:"; printf '  %s\n' "${steps[@]}"; }
}
trap report EXIT

step "build $build_dir/ (scripts/setup.sh)" env BUILD_DIR="$build_dir" WBCHECK_FUZZ_BUILD=0 bash scripts/setup.sh
if [ "${WBCHECK_FUZZ_BUILD:-1}" = 1 ] && command -v clang++ >/dev/null; then
  step "build build-fuzz/, fuzz-only (scripts/build-fuzz.sh)" bash scripts/build-fuzz.sh
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
step "ctest" ctest --test-dir "$build_dir" --output-on-failure -j "${JOBS:-$(nproc)}"
if [ -f build-fuzz/build.ninja ]; then
  # The replay tests again, in the ASan+UBSan build of the fuzz targets.
  step "ctest build-fuzz/ (replays under ASan+UBSan)" ctest --test-dir build-fuzz --output-on-failure -j "${JOBS:-$(nproc)}"
fi

if [ "${WBCHECK_CI_FUZZ:-1}" = 1 ] && [ -f build-fuzz/build.ninja ]; then
  seconds=${WBCHECK_FUZZ_SECONDS:-45}
  step "fuzz (fuzz/ci-fuzz.sh $seconds)" env WBCHECK="$build_dir/cli/wbcheck" bash fuzz/ci-fuzz.sh "$seconds"
  if [ "${WBCHECK_CFLITE_CHECK:-1}" = 1 ]; then
    step "ClusterFuzzLite build (fuzz/cflite-check.sh)" bash fuzz/cflite-check.sh
  fi
fi
