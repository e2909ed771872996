// campaign/shrink_policy.cpp: which findings get shrunk (see campaign/shrink_policy.h).
#include "campaign/shrink_policy.h"

#include <algorithm>

namespace wb::campaign {

bool selectForShrinking(const ShrinkPolicy& policy, ShrinkCounts& counts, const FindingKey& unshrunk,
                        const std::vector<HazardClass>& features) {
  const bool mayAddAClass = std::any_of(features.begin(), features.end(), [&](HazardClass h) {
    const auto it = counts.shrunkByClass.find(h);
    return (it == counts.shrunkByClass.end() ? 0 : it->second) < policy.shrunkPerClass;
  });
  const bool amongTheFirst = counts.findingsByUnshrunkKey[unshrunk]++ < policy.shrinksPerUnshrunkKey;
  return amongTheFirst || mayAddAClass;
}

void countShrunk(ShrinkCounts& counts, HazardClass shrunk) { ++counts.shrunkByClass[shrunk]; }

}  // namespace wb::campaign
