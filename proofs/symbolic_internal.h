// proofs/symbolic_internal.h: what symbolic.cpp and the two tiers' executors share (internal).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "proofs/symbolic.h"

namespace wb::proofs::detail {

// The static shape of a type annotation ("f32[2, 8]"), as the oracle reads it; nullopt when it
// is missing or symbolic.
std::optional<std::vector<std::int64_t>> staticShape(std::string_view typeText);

Result<SymbolicRun> executeElement(const Program& program, const SchemaTable& schemas, const NodeKeys& keys,
                                   Vocabulary& vocabulary, const SymbolicOptions& options);
Result<SymbolicRun> executeStorage(const Program& program, const SchemaTable& schemas, const NodeKeys& keys,
                                   Vocabulary& vocabulary, const SymbolicOptions& options);

}  // namespace wb::proofs::detail
