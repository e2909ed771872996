// proofs/ordering_internal.h: what the ordering proof's files share (not a public header):
// the placed program matched against the program, and the dependences the storage semantics
// imposes on what the placement inserted (proofs/ordering_match.cpp), in the words of
// proofs/ordering_words.h; the queries are proofs/ordering.cpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proofs/ordering.h"

namespace wb::proofs::detail {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// " [copy-views mode]", " [alias-views mode]", or nothing for both.
std::string modesText(std::uint8_t modes);

// The effects of one view mode (modes 1: copy-views, 2: alias-views), or of both (3) when they
// coincide (Effects::viewModesDiffer false: no node the two modes treat differently).
struct ModeEffects {
  const Effects* effects = nullptr;
  std::uint8_t modes = 0;
};
// The effects in view mode `bit` (1 or 2).
const Effects& effectsIn(std::span<const ModeEffects> modes, std::uint8_t bit);

// The placed program against the program: which nodes were inserted, where, and what else
// changed.
struct Matching {
  std::vector<InsertedNode> inserted;
  std::vector<std::size_t> placedOf;  // per original node: its index in the placed graph, or kNone
  std::vector<StructuralFault> faults;
  std::optional<std::string> outside;  // the placement did something the proof does not model
};

Matching matchPlacement(const Program& program, const Program& placed, const std::vector<MutationOutput>& mutations,
                        std::span<const ModeEffects> modes);

// The dependences of the inserted nodes, from the effects of both view modes: one per (kind,
// ends, root), holding the modes it exists in. Nodes the placement dropped (placedOf: kNone)
// bind nothing. `drop`: tests only (OrderingOptions::dropKind).
std::vector<Dependence> deriveDependences(const Program& program, const std::vector<InsertedNode>& inserted,
                                          std::span<const ModeEffects> modes, const std::vector<std::size_t>& placedOf,
                                          const std::optional<DepKind>& drop);

}  // namespace wb::proofs::detail
