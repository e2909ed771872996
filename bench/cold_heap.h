// bench/cold_heap.h: hands the heap's free memory back to the system before a timed placement,
// so that every measurement starts from the same cold heap (its pages faulted in anew), whichever
// allocator the build links (see "Allocator" in bench/README.md).
#pragma once

#if defined(WBCHECK_JEMALLOC)
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif

namespace wb::bench {

inline void releaseFreeMemory() {
#if defined(WBCHECK_JEMALLOC)
  // The thread's cache first (its blocks go back to their arenas), then every arena's dirty
  // and muzzy pages.
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
#define WBCHECK_STRINGIFY_(x) #x
#define WBCHECK_STRINGIFY(x) WBCHECK_STRINGIFY_(x)
  mallctl("arena." WBCHECK_STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", nullptr, nullptr, nullptr, 0);
#undef WBCHECK_STRINGIFY
#undef WBCHECK_STRINGIFY_
#else
  malloc_trim(0);
#endif
}

}  // namespace wb::bench
