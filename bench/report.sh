#!/usr/bin/env bash
# bench/report.sh: the evaluation in one command. Builds what it needs, runs
#   1. the mutation score of the suite (bench/mutation.sh; quick by default: 2 seeds, 10 s cap;
#      --full: 10 seeds, 30 s cap, about an hour or more on 2 cores),
#   2. the memory figures of the placements on the model zoo and the corpus, with a lower bound
#      (bench/memory_report.cpp, bench/memory_plots.py: tables and SVG plots),
#   3. the placement-time report (bench/placement_report.cpp), the oracle's checks per second
#      (bench/oracle_bench.cpp) and the fuzzer's cases per second (wbcheck fuzz),
# and writes bench/RESULTS.md (machine, versions, commands, figures) with the SVGs in
# bench/figures/. Progress goes to stderr.
#
# Usage: bash bench/report.sh [--full] [--skip-mutation]
# Environment: BUILD (build directory, default build: the one scripts/test.sh makes; a new one is
# configured with the project's default build type, RelWithDebInfo), SKIP_BUILD=1 (use the
# binaries already in BUILD: while another build runs in it), SEEDS and CAP
# (override the mutation settings), JOBS (default 2: this project's machines have 2 cores).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
full=0
skip_mutation=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --skip-mutation) skip_mutation=1 ;;
    *) echo "usage: bash bench/report.sh [--full] [--skip-mutation]" >&2; exit 2 ;;
  esac
done
build="${BUILD:-build}"
jobs="${JOBS:-2}"
if [[ $full -eq 1 ]]; then seeds="${SEEDS:-10}"; cap="${CAP:-30}"; else seeds="${SEEDS:-2}"; cap="${CAP:-10}"; fi
results="$here/bench/results"
figures="$here/bench/figures"
mkdir -p "$results" "$figures"
step() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  step "building in $build (wbcheck, memory_report, placement_report, oracle_bench)"
  cmake_args=(-S . -B "$build" -G Ninja)
  if command -v ccache >/dev/null; then cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  [[ -f "$build/build.ninja" ]] || cmake "${cmake_args[@]}" >/dev/null
  cmake --build "$build" -j"$jobs" --target wbcheck memory_report placement_report oracle_bench >&2
fi
wb="$build/cli/wbcheck"

# 1. Mutation score.
mutation_cmd="SEEDS=$seeds CAP=$cap bash bench/mutation.sh"
if [[ $skip_mutation -eq 0 ]]; then
  step "mutation score: $mutation_cmd (progress below)"
  mut_out="$results/mutation-s${seeds}-c${cap%.*}"
  OUT="$mut_out" BIN="$results/bin" SEEDS="$seeds" CAP="$cap" bash bench/mutation.sh > /dev/null
  cp "$mut_out/mutation.json" "$results/mutation.json"
  cp "$mut_out/mutation.md" "$results/mutation.md"
  if [[ $full -eq 1 ]]; then
    cp "$mut_out/mutation.json" "$results/mutation-full.json"
    cp "$mut_out/mutation.md" "$results/mutation-full.md"
  fi
fi

# 2. Memory.
step "memory: memory_report over the zoo (1..32 layers) and the corpus"
mapfile -t corpus_files < <(ls corpus/hazards/*.txt corpus/regressions/*.txt corpus/models/*.txt 2>/dev/null)
"$build/bench/memory_report" "${corpus_files[@]}" > "$results/memory.jsonl"
python3 bench/memory_plots.py "$results/memory.jsonl" "$figures"
mv "$figures/memory.md" "$results/memory.md"

# 3. Speed.
step "placement_report --rounds 2 (placement time, issue 3's targets)"
placement_txt="$("$build/bench/placement_report" --rounds 2 2>&1 || true)"
step "oracle_bench (checks per second, one core)"
oracle_txt="$("$build/bench/oracle_bench" --benchmark_filter='BM_CheckEndToEnd|BM_CheckerEndToEnd' --benchmark_min_time=2 2>&1 || true)"
step "fuzz throughput: wbcheck fuzz --placement early --time 20 --jobs 1"
fuzz_txt="$("$wb" fuzz --placement early --time 20 --jobs 1 --seed 1 --no-draw --out "$results/fuzz-throughput" 2>/dev/null || true)"

step "writing bench/RESULTS.md"
{
  echo "# wbcheck: evaluation results"
  echo
  echo "Written by \`bash bench/report.sh$([[ $full -eq 1 ]] && echo " --full")\` on $(date -u '+%Y-%m-%d %H:%M UTC'). Rerun it to reproduce;"
  echo "the raw data is in \`bench/results/\` (JSON), the plots in \`bench/figures/\`."
  echo
  echo "## Machine and versions"
  echo
  echo "- $(uname -srm); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- commit $(git rev-parse --short HEAD)$([[ -n "$(git status --porcelain -- core oracle gen campaign proofs cli)" ]] && echo " (with uncommitted changes)"); $("$wb" --version 2>/dev/null | head -1)"
  echo "- $(g++ --version | head -1); Z3 $(z3 --version 2>/dev/null | awk '{print $3}' || echo '?'); build: $build ($(grep -m1 "^CMAKE_BUILD_TYPE" "$build/CMakeCache.txt" | cut -d= -f2))"
  echo
  echo "## 1. Mutation score: does the suite find bugs of early and of the alias analysis?"
  echo
  if [[ $skip_mutation -eq 0 ]]; then
    echo "Command: \`$mutation_cmd\` (bench/mutation.sh says what each component runs; the mutants are"
  else
    echo "Not rerun (\`--skip-mutation\`): the table is the last run's, \`bench/results/mutation.md\`; its first line"
    echo "gives its seeds and cap (bench/mutation.sh says what each component runs; the mutants are"
  fi
  echo "\`bench/mutants/*.patch\`, each one plausible bug, applied in a scratch worktree)."
  echo
  if [[ -f "$results/mutation.md" ]]; then cat "$results/mutation.md"; else echo "(not run)"; fi
  if [[ -f "$results/mutation-full.md" && $full -eq 0 ]]; then
    echo
    echo "The last full campaign (10 seeds, 30 s cap, \`bash bench/report.sh --full\`):"
    echo
    cat "$results/mutation-full.md"
  fi
  echo
  echo "## 2. Memory: what each placement costs in ExecuTorch's memory plan"
  echo
  echo "Command: \`$build/bench/memory_report corpus/hazards/*.txt corpus/regressions/*.txt corpus/models/*.txt\`,"
  echo "then \`python3 bench/memory_plots.py\`. The model is core/memplan.h (ExecuTorch's planner after the write-back pass)."
  echo
  echo "![peak saved against layers](figures/memory-saving-vs-layers.svg)"
  echo
  echo "![peak per placement](figures/memory-peak-per-placement.svg)"
  echo
  cat "$results/memory.md"
  echo
  echo "## 3. Speed"
  echo
  echo "Placement time (\`$build/bench/placement_report --rounds 2\`):"
  echo
  echo '```'
  echo "$placement_txt"
  echo '```'
  echo
  echo "Oracle checks (\`$build/bench/oracle_bench --benchmark_filter='BM_CheckEndToEnd|BM_CheckerEndToEnd' --benchmark_min_time=2\`):"
  echo
  echo '```'
  echo "$oracle_txt" | grep -E '^(BM_|Benchmark|-)' || echo "$oracle_txt" | tail -5
  echo '```'
  echo
  echo "Fuzzer throughput (\`$wb fuzz --placement early --time 20 --jobs 1 --seed 1\`, one process):"
  echo
  echo '```'
  echo "$fuzz_txt" | grep -E 'cases in|no findings' || echo "$fuzz_txt" | tail -3
  echo '```'
} > "$here/bench/RESULTS.md"
step "done: bench/RESULTS.md"
