#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/README.md) in build-fuzz/ (FUZZ_BUILD_DIR): clang,
# WBCHECK_FUZZ=ON, and nothing else: the CLI, tests and benchmarks are off, and every package
# the fuzzers do not link is hidden (GTest, RapidCheck, CLI11, nlohmann-json, benchmark, and
# pkg-config, through which Z3 and jemalloc are found), so this configure is also the proof that
# a fuzz-only build (ClusterFuzzLite's, .clusterfuzzlite/build.sh) needs fmt alone: a
# find_package(... REQUIRED) of a hidden package would fail it. scripts/setup.sh runs it.
# Environment: FUZZ_BUILD_DIR (default build-fuzz), WBCHECK_WERROR=1, JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang++ >/dev/null || { echo "build-fuzz: clang++ not found" >&2; exit 2; }
fuzz_dir=${FUZZ_BUILD_DIR:-build-fuzz}
werror=OFF; [ "${WBCHECK_WERROR:-0}" = 1 ] && werror=ON
hidden=()
for package in GTest rapidcheck CLI11 nlohmann_json benchmark PkgConfig; do
  hidden+=("-DCMAKE_DISABLE_FIND_PACKAGE_$package=ON")
done
mkdir -p "$fuzz_dir"
PKG_CONFIG_LIBDIR="$PWD/$fuzz_dir/no-pkg-config" PKG_CONFIG_PATH= \
  cmake -S . -B "$fuzz_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DWBCHECK_FUZZ=ON \
        -DWBCHECK_CLI=OFF -DWBCHECK_TESTS=OFF -DWBCHECK_BENCH=OFF -DWBCHECK_WERROR=$werror \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo "${hidden[@]}" >/dev/null
# Everything the fuzz-only configure has: the libFuzzer targets, and the replay drivers and the
# mutator self-test that ctest runs in build-fuzz/ (scripts/test.sh: the replays under ASan+UBSan).
cmake --build "$fuzz_dir" -j "${JOBS:-$(nproc)}"
