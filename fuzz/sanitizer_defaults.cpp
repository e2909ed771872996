// fuzz/sanitizer_defaults.cpp: AddressSanitizer's defaults for the libFuzzer targets (linked into
// them alone, not into the replay drivers). A .options file cannot carry them: libFuzzer reads
// it as its own flags. ASAN_OPTIONS in the environment still overrides every key here
// (ClusterFuzzLite sets its own), e.g. ASAN_OPTIONS=malloc_context_size=30 for full stacks.
//
// malloc_context_size=0: ASan stores no stack for each malloc and free. Unwinding the stack and
// storing it in the stack depot was a tenth of every execution of the program targets
// (fuzz/README.md, "Speed"). What ASan detects is unchanged, and a report still has the stack of
// the bad access; only the "allocated by" / "freed by" stacks of a heap report (and a leak's
// allocation stack) are left out. The replay drivers keep ASan's defaults: fuzz/ci-fuzz.sh
// replays every crash with one (replay.log in its work directory has every stack), and so can
// anyone: build-fuzz/fuzz/<target>_replay CRASH.
extern "C" const char* __asan_default_options() { return "malloc_context_size=0"; }
