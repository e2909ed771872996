#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with ctest.
# WBCHECK_SANITIZE=1 runs it in an ASan+UBSan build (build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${WBCHECK_SANITIZE:-0}" = 1 ]; then export BUILD_DIR=${BUILD_DIR:-build-asan}; fi
build_dir=${BUILD_DIR:-build}
BUILD_DIR=$build_dir bash scripts/setup.sh
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build_dir" --output-on-failure -j "${JOBS:-$(nproc)}"
