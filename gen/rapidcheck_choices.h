// gen/rapidcheck_choices.h: a Choices source that draws every pick from RapidCheck.
//
// Header-only and included by tests only (gen/*.cpp never include RapidCheck). Each pick is
// `*rc::gen::inRange(lo, hi + 1)` inside a property, so RapidCheck records the choice and
// shrinks it towards lo, which by the Choices convention is the simplest alternative: a
// failing generated program shrinks to a smaller, simpler one that is still valid.
//
//   RC_GTEST_PROP(Gen, Valid, ()) {
//     wb::gen::RapidCheckChoices choices;
//     wb::Program p = wb::gen::generateProgram(choices, {});
//     RC_ASSERT(wb::validate(p).empty());
//   }
#pragma once

#include <rapidcheck.h>

#include <cstdint>

#include "gen/choices.h"

namespace wb::gen {

class RapidCheckChoices final : public Choices {
 public:
  std::int64_t pick(std::int64_t lo, std::int64_t hi) override {
    if (hi <= lo) return lo;
    if (hi == INT64_MAX) return *rc::gen::inRange<std::int64_t>(lo, hi);  // [lo, hi): rare edge
    return *rc::gen::inRange<std::int64_t>(lo, hi + 1);
  }
};

}  // namespace wb::gen
