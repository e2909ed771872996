#!/usr/bin/env bash
# bench/mutation.sh: the mutation score of the suite. Each bench/mutants/*.patch is one small,
# plausible bug of `early` or of the alias analysis it relies on (the patch's first line says
# which class). The script applies each patch in a scratch git worktree, rebuilds wbcheck and the
# property-test binaries there (one build directory, ccache), keeps the binaries per mutant, and
# runs every component of the suite against each mutant:
#
#   fuzz      wbcheck fuzz --placement early --seed S --time CAP --jobs 1 --until-found
#             (seconds and cases to the first finding, shrunk body nodes), per seed
#   props     RapidCheck properties of early (tests/gen_properties_test.cpp: early == S_par,
#             placed programs validate, no copy later than end's, peak <= end's), RC_PARAMS seed=S
#   zprops    the Z3 property (tests/proofs_ordering_test.cpp: early is proved minimal on
#             generated programs), RC_PARAMS seed=S
#   corpus    the oracle alone over corpus/hazards and corpus/regressions (wbcheck check,
#             deterministic: which programs kill the mutant)
#   prove     the Z3 ordering proof over the same files (wbcheck prove --only ordering)
#
# The unmutated tree runs first (one seed): no component may report anything there.
# Writes OUT/mutation.json and OUT/mutation.md (a Markdown table: killed seeds, median and range
# of seconds and cases to the first finding, shrunk size).
#
# Usage: bench/mutation.sh [MUTANT...]      (names like m03_share_alloc_ignored; default all)
# Environment:
#   SEEDS=10        seeds 1..SEEDS per seeded component (quick runs: SEEDS=2)
#   CAP=30          seconds per run of a seeded component
#   COMPONENTS      subset of "fuzz props zprops corpus prove" (default all)
#   OUT             results directory (default bench/results)
#   BIN             where the binaries of each mutant are kept (default OUT/bin)
#   MUT_SCRATCH     scratch worktree (default build-mutation/src); its build dir is MUT_SCRATCH/build
#   RC_MAX_SUCCESS  RapidCheck cases per property and seed (default 100000: CAP bounds the run)
#   KEEP=1          keep the results of the components this run leaves out (OUT/mutation.json):
#                   COMPONENTS="corpus prove" KEEP=1 reruns the corpus after adding to it
# The mutants are applied to the committed HEAD (uncommitted changes to core/ are not measured).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
seeds="${SEEDS:-10}"
cap="${CAP:-30}"
components="${COMPONENTS:-fuzz props zprops corpus prove}"
out="${OUT:-$here/bench/results}"
scratch="${MUT_SCRATCH:-$here/build-mutation/src}"
bin="${BIN:-$out/bin}"
mkdir -p "$bin" "$out/runs"
targets=(wbcheck gen_properties_test proofs_ordering_test)

if [[ $# -gt 0 ]]; then
  mutants=("$@")
else
  mutants=()
  for p in "$here"/bench/mutants/*.patch; do mutants+=("$(basename "$p" .patch)"); done
fi

head_commit="$(git -C "$here" rev-parse HEAD)"
# What the binaries are built from: every top-level tree but the ones no binary is built from
# (a commit that only touches bench/, corpus/ or docs/ keeps the mutants' binaries).
source_key="$(git -C "$here" ls-tree HEAD | grep -v -P '\t(bench|corpus|docs|scripts|tools|fuzz|README.md|\.ci)$' | sha256sum | cut -c1-16)"
if [[ -n "$(git -C "$here" status --porcelain -- core)" ]]; then
  echo "mutation.sh: note: uncommitted changes in core/ are not measured (the mutants apply to HEAD $head_commit)" >&2
fi

# The scratch worktree, at HEAD, with no mutant applied.
if [[ ! -e "$scratch/.git" ]]; then
  mkdir -p "$(dirname "$scratch")"
  git -C "$here" worktree add --detach "$scratch" "$head_commit" >/dev/null
fi
git -C "$scratch" checkout --quiet --force --detach "$head_commit"
git -C "$scratch" checkout --quiet -- .

# One build directory; ccache shares objects with other build trees of the same layout
# (CCACHE_BASEDIR makes paths relative; NOHASHDIR keeps the debug info's directory out of the key).
cmake_args=(-S "$scratch" -B "$scratch/build" -G Ninja -DCMAKE_CXX_COMPILER=g++ -DWBCHECK_WERROR=ON)
if command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$scratch" CCACHE_NOHASHDIR=1
fi
if command -v ld.lld >/dev/null; then cmake_args+=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld); fi
if [[ ! -f "$scratch/build/build.ninja" ]]; then cmake "${cmake_args[@]}" >/dev/null; fi

# build NAME [PATCH]: the binaries of one mutant (or of the unmutated tree) in BIN/NAME,
# rebuilt only when the sources (source_key) or the patch changed.
build() {
  local name="$1" patch="${2:-}" stamp="$source_key"
  if [[ -n "$patch" ]]; then stamp+=" $(sha256sum < "$patch" | cut -c1-16)"; fi
  if [[ -f "$bin/$name/stamp" && "$(cat "$bin/$name/stamp")" == "$stamp" ]]; then return 0; fi
  if [[ -n "$patch" ]]; then git -C "$scratch" apply "$patch"; fi
  local status=0
  cmake --build "$scratch/build" -j2 --target "${targets[@]}" > "$bin/$name.log" 2>&1 || status=$?
  if [[ -n "$patch" ]]; then git -C "$scratch" checkout --quiet -- .; fi
  if [[ $status -ne 0 ]]; then
    echo "mutation.sh: $name does not build (see $bin/$name.log)" >&2
    return 1
  fi
  mkdir -p "$bin/$name"
  cp "$scratch/build/cli/wbcheck" "$scratch/build/tests/gen_properties_test" \
     "$scratch/build/tests/proofs_ordering_test" "$bin/$name/"
  echo "$stamp" > "$bin/$name/stamp"
}

echo "# mutation score: ${#mutants[@]} mutant(s), seeds 1..$seeds, cap ${cap}s, components: $components" >&2
echo "# building (scratch worktree $scratch) ..." >&2
build baseline
built=()
for m in "${mutants[@]}"; do
  echo "#   $m" >&2
  if build "$m" "$here/bench/mutants/$m.patch"; then built+=("$m"); fi
done

python3 "$here/bench/mutation_run.py" --repo "$here" --out "$out" --bin "$bin" --seeds "$seeds" --cap "$cap" \
  --components "$components" --head "$head_commit" $([[ "${KEEP:-0}" == 1 ]] && echo --keep) baseline "${built[@]}"
