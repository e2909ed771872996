// cli/ordering_json.h: the ordering proof's report as JSON (`wbcheck prove --json`, and the
// broken constraints `wbcheck check --json` adds to a placement bug). The shape is documented
// in README.md ("Prove a placement") and stable: fields are only ever added.
#pragma once

#include <nlohmann/json.hpp>

#include "core/ir.h"
#include "oracle/oracle.h"
#include "proofs/ordering.h"

namespace wb::cli {

// {"verdict", "reason", "satisfied", "minimal", "minimality_required", "faults", "violations",
//  "more_violations", "inserted", "disagreements", "dependences", "queries", "rlimit_used",
//  "solver_seconds", "seconds"}
nlohmann::json orderingJson(const Program& program, const proofs::OrderingReport& report);

// The texts of the live violated dependences that hold in `mode` (a check's bug in that mode).
std::vector<std::string> brokenConstraints(const proofs::OrderingReport& report, oracle::ViewMode mode);

}  // namespace wb::cli
