// campaign/shrink_policy.h: which findings of a fuzzing run get shrunk.
//
// Shrinking a finding costs about ten cases, and a third of the cases of a buggy placement
// diverge, so a worker cannot shrink them all. It shrinks the first few per unshrunk key
// (placement, verdict, view modes, target, class): they give the distinct shapes. Beyond
// those, it still shrinks a finding while one of the classes its program matches (it may
// shrink to any of them: matchingHazards) has been the class of fewer than a few shrunk
// findings, so that a rare class hidden behind a common key is not lost.
#pragma once

#include <map>
#include <vector>

#include "campaign/campaign.h"

namespace wb::campaign {

struct ShrinkPolicy {
  int shrinksPerUnshrunkKey = 12;
  int shrunkPerClass = 3;
};

// What a worker has shrunk so far, as the policy counts it.
struct ShrinkCounts {
  std::map<FindingKey, int> findingsByUnshrunkKey;  // findings seen per key, shrunk or not
  std::map<HazardClass, int> shrunkByClass;         // shrunk findings per class after shrinking
};

// Whether to shrink a finding with key `unshrunk` whose program matches `features`. Counts the
// finding under its key either way.
bool selectForShrinking(const ShrinkPolicy& policy, ShrinkCounts& counts, const FindingKey& unshrunk,
                        const std::vector<HazardClass>& features);

// Records the class a shrunk finding was given.
void countShrunk(ShrinkCounts& counts, HazardClass shrunk);

}  // namespace wb::campaign
