#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, as root) and builds wbcheck into build/.
# (z3, the solver executable, lets the tests replay the queries `wbcheck prove --smt-dump` writes.)
# Environment: BUILD_DIR (default build), WBCHECK_SANITIZE=1 for an ASan+UBSan build,
# WBCHECK_WERROR=1 to treat warnings as errors, JOBS (default: number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git
          libgtest-dev libgmock-dev librapidcheck-dev libz3-dev z3 libcli11-dev nlohmann-json3-dev
          libfmt-dev libbenchmark-dev libjemalloc-dev graphviz clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then echo "setup: missing packages need root (apt-get install ${missing[*]})" >&2; exit 2; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${BUILD_DIR:-build}
sanitize=OFF; [ "${WBCHECK_SANITIZE:-0}" = 1 ] && sanitize=ON
werror=OFF; [ "${WBCHECK_WERROR:-0}" = 1 ] && werror=ON
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=g++ \
      -DWBCHECK_SANITIZE=$sanitize -DWBCHECK_WERROR=$werror >/dev/null
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}"

# The libFuzzer targets (fuzz/README.md) in build-fuzz/: clang, WBCHECK_FUZZ=ON, and nothing
# else: the CLI, tests and benchmarks are off, and every package the fuzzers do not link is
# hidden (GTest, RapidCheck, CLI11, nlohmann-json, benchmark, and pkg-config, through which Z3
# and jemalloc are found), so this configure is also the proof that a fuzz-only build
# (ClusterFuzzLite's, .clusterfuzzlite/build.sh) needs fmt alone. Skipped without clang++ or
# with WBCHECK_FUZZ_BUILD=0.
if [ "${WBCHECK_FUZZ_BUILD:-1}" = 1 ] && command -v clang++ >/dev/null; then
  fuzz_dir=${FUZZ_BUILD_DIR:-build-fuzz}
  hidden=()
  for package in GTest rapidcheck CLI11 nlohmann_json benchmark PkgConfig; do
    hidden+=("-DCMAKE_DISABLE_FIND_PACKAGE_$package=ON")
  done
  mkdir -p "$fuzz_dir"
  PKG_CONFIG_LIBDIR="$PWD/$fuzz_dir/no-pkg-config" PKG_CONFIG_PATH= \
    cmake -S . -B "$fuzz_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DWBCHECK_FUZZ=ON \
          -DWBCHECK_CLI=OFF -DWBCHECK_TESTS=OFF -DWBCHECK_BENCH=OFF -DWBCHECK_WERROR=$werror \
          -DCMAKE_BUILD_TYPE=RelWithDebInfo "${hidden[@]}" >/dev/null
  cmake --build "$fuzz_dir" -j "${JOBS:-$(nproc)}" --target fuzzers
fi
