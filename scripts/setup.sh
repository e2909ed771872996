#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, as root) and builds wbcheck into build/.
# (z3, the solver executable, lets the tests replay the queries `wbcheck prove --smt-dump` writes.)
# Environment: BUILD_DIR (default build), WBCHECK_SANITIZE=1 for an ASan+UBSan build,
# WBCHECK_WERROR=1 to treat warnings as errors, JOBS (default: number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git
          libgtest-dev libgmock-dev librapidcheck-dev libz3-dev z3 libcli11-dev nlohmann-json3-dev
          libfmt-dev libbenchmark-dev libjemalloc-dev graphviz clang libclang-rt-14-dev python3)
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

# The libFuzzer targets in build-fuzz/ (scripts/build-fuzz.sh), whenever clang++ is present;
# WBCHECK_FUZZ_BUILD=0 skips them.
if [ "${WBCHECK_FUZZ_BUILD:-1}" = 1 ] && command -v clang++ >/dev/null; then
  WBCHECK_WERROR=${WBCHECK_WERROR:-0} bash scripts/build-fuzz.sh
fi
