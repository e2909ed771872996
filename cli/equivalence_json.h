// cli/equivalence_json.h: the equivalence proof's report as JSON (`wbcheck validate --json`,
// and the "equivalence" object of `wbcheck prove --json`). The shape is documented in README.md
// ("Validate your pass's output") and stable: fields are only ever added.
#pragma once

#include <nlohmann/json.hpp>

#include "proofs/equivalence.h"

namespace wb::cli {

// {"verdict", "exit_code", "tier", "tier_reason", "notes", "matched_nodes",
//  "unmatched_after_nodes", "modes": [{"view_mode", "verdict", "detail", "solver_ms",
//  "compared_elements", "different_terms", "counterexample"}], "counterexample", "smt_dump",
//  "total_ms"}; a counterexample: {"view_mode", "solver_observation", "solver_element",
//  "behaviours", "confirmed", "replayed_with", "inputs", "oracle": {"observation", "is_output",
//  "element", "before", "after"} or null}.
nlohmann::json equivalenceJson(const proofs::EquivalenceReport& report, const proofs::PreparedPair& pair);

}  // namespace wb::cli
