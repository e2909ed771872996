// cli/equivalence_json.cpp: see equivalence_json.h.
#include "cli/equivalence_json.h"

namespace wb::cli {

namespace {

nlohmann::json valueOrNull(const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json counterexampleJson(const proofs::Counterexample& c) {
  nlohmann::json j = {{"view_mode", std::string(oracle::toString(c.viewMode))},
                      {"solver_observation", c.solverObservation},
                      {"solver_element", c.solverElement},
                      {"behaviours", c.behaviours},
                      {"confirmed", c.confirmed},
                      {"replayed_with", c.replayedWith},
                      {"inputs", c.inputs}};
  if (c.confirmed)
    j["oracle"] = {{"observation", c.difference.label},
                   {"is_output", c.difference.isOutput},
                   {"element", c.difference.element},
                   {"before", valueOrNull(c.difference.expected)},
                   {"after", valueOrNull(c.difference.actual)}};
  else
    j["oracle"] = nullptr;
  return j;
}

}  // namespace

nlohmann::json equivalenceJson(const proofs::EquivalenceReport& report, const proofs::PreparedPair& pair) {
  nlohmann::json out;
  out["verdict"] = std::string(proofs::toString(report.verdict));
  out["exit_code"] = report.exitCode();
  out["tier"] = std::string(oracle::toString(report.tier));
  out["tier_reason"] = report.tierReason;
  out["notes"] = pair.notes;
  out["matched_nodes"] = pair.matchedNodes;
  out["unmatched_after_nodes"] = pair.unmatched;
  out["modes"] = nlohmann::json::array();
  for (const proofs::ModeResult& m : report.modes) {
    nlohmann::json mode = {{"view_mode", std::string(oracle::toString(m.viewMode))},
                           {"verdict", std::string(proofs::toString(m.verdict))},
                           {"detail", m.detail},
                           {"solver_ms", m.solverMs},
                           {"compared_elements", m.comparedElements},
                           {"different_terms", m.differentTerms}};
    mode["counterexample"] = m.counterexample ? counterexampleJson(*m.counterexample) : nlohmann::json(nullptr);
    out["modes"].push_back(std::move(mode));
  }
  const proofs::Counterexample* c = report.counterexample();
  out["counterexample"] = c ? counterexampleJson(*c) : nlohmann::json(nullptr);
  out["smt_dump"] = report.dumped;
  out["total_ms"] = report.totalMs;
  return out;
}

}  // namespace wb::cli
