#!/bin/bash -eu
# .clusterfuzzlite/build.sh: builds the fuzz targets the OSS-Fuzz way (DESIGN §10): compilers
# and flags from $CC $CXX $CFLAGS $CXXFLAGS, the engine from $LIB_FUZZING_ENGINE, scratch in
# $WORK, and into $OUT: each fuzzer of fuzz/targets.txt, <target>_seed_corpus.zip (files named
# by sha1), <target>.options and the dictionary they name. The configure is fuzz-only (no CLI,
# tests or benchmarks): it needs cmake, ninja, zip and fmt, nothing else.
# Also works outside Docker with those variables set (fuzz/cflite-check.sh does, under ctest
# and CI):
#   CC=clang CXX=clang++ CFLAGS="-O1 -gline-tables-only -fsanitize=address,fuzzer-no-link" \
#   CXXFLAGS="-O1 -gline-tables-only -fsanitize=address,fuzzer-no-link" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/cflite-out SRC=/work WORK=/tmp/cflite-work \
#   bash .clusterfuzzlite/build.sh
# The project is the directory above this script's, wherever $SRC points.
project=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ ! -f "$project/fuzz/CMakeLists.txt" ]; then project=$SRC/wbcheck; fi
cd "$project"
mkdir -p "$OUT" "$WORK"

# The distribution's dev packages (fmt) are built against libstdc++: OSS-Fuzz's default
# -stdlib=libc++ would not link with them.
cxxflags=${CXXFLAGS//-stdlib=libc++/}
build="$WORK/wbcheck-build"
targets=()
while read -r target _; do
  [ -z "$target" ] || [[ $target == \#* ]] || targets+=("$target")
done <fuzz/targets.txt

# Sanitizers and coverage come from $CXXFLAGS (WBCHECK_FUZZ_SANITIZE empty), the engine from
# $LIB_FUZZING_ENGINE; build type None so that $CXXFLAGS alone set the optimisation level (OSS-Fuzz
# passes -O1 -gline-tables-only); only the fuzz targets and the libraries they use are built.
cmake -S . -B "$build" -G Ninja \
      -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_BUILD_TYPE=None \
      -DWBCHECK_FUZZ=ON -DWBCHECK_FUZZ_SANITIZE= -DWBCHECK_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
      -DWBCHECK_CLI=OFF -DWBCHECK_TESTS=OFF -DWBCHECK_BENCH=OFF
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

while read -r t dirs; do
  [ -z "$t" ] || [[ $t == \#* ]] && continue
  cp "$build/fuzz/$t" "$OUT/$t"
  cp "fuzz/$t.options" "$OUT/$t.options"
  # Seed corpus: the target's directories (of corpus/, the program files), entries named by
  # their sha1 as OSS-Fuzz expects.
  seeds="$WORK/seeds-$t"
  rm -rf "$seeds" && mkdir -p "$seeds"
  for dir in $dirs; do
    if [ "$dir" = corpus ]; then files=$(find corpus -type f -name '*.txt'); else files=$(find "$dir" -type f); fi
    for f in $files; do cp "$f" "$seeds/$(sha1sum "$f" | cut -d' ' -f1)"; done
  done
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "$seeds" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*)
  # The dictionary its .options names ([libfuzzer] dict = ...), if any.
  dict=$(sed -n 's/^ *dict *= *//p' "fuzz/$t.options")
  if [ -n "$dict" ]; then cp "fuzz/$dict" "$OUT/$dict"; fi
done <fuzz/targets.txt
