// cli/ordering_json.cpp: see ordering_json.h.
#include "cli/ordering_json.h"

namespace wb::cli {

namespace {

nlohmann::json nameOr(const Program& p, NodeId n) {
  if (n == kNoNode || n >= p.graph.nodes.size()) return nullptr;
  return p.graph.nodes[n].name;
}

std::string modesName(std::uint8_t modes) {
  if (modes == 1) return "copy-views";
  if (modes == 2) return "alias-views";
  return "both";
}

}  // namespace

nlohmann::json orderingJson(const Program& program, const proofs::OrderingReport& r) {
  using proofs::InsertedNode;
  nlohmann::json j;
  j["verdict"] = std::string(proofs::toString(r.verdict));
  j["reason"] = r.reason;
  j["satisfied"] = r.satisfied ? nlohmann::json(*r.satisfied) : nlohmann::json(nullptr);
  j["minimal"] = r.minimal ? nlohmann::json(*r.minimal) : nlohmann::json(nullptr);
  j["minimality_required"] = r.minimalityRequired;
  j["faults"] = nlohmann::json::array();
  for (const proofs::StructuralFault& f : r.faults)
    j["faults"].push_back({{"kind", std::string(proofs::toString(f.kind))}, {"text", f.text}});
  j["violations"] = nlohmann::json::array();
  for (const proofs::Violation& v : r.violations) {
    const proofs::Dependence& d = r.dependences[v.dependence];
    j["violations"].push_back({{"rule", std::string(proofs::toString(d.kind))},
                               {"text", v.text},
                               {"live", v.live},
                               {"inserted", r.inserted[d.inserted].name},
                               {"before", d.before},
                               {"node", d.other ? nlohmann::json(nullptr) : nameOr(program, d.node)},
                               {"other_inserted", d.other ? nlohmann::json(r.inserted[*d.other].name) : nlohmann::json(nullptr)},
                               {"root", nameOr(program, d.root)},
                               {"view_modes", modesName(d.modes)},
                               {"name", r.dependenceNames[v.dependence]}});
  }
  j["more_violations"] = r.moreViolations;
  j["inserted"] = nlohmann::json::array();
  for (std::size_t u = 0; u < r.inserted.size(); ++u) {
    const InsertedNode& n = r.inserted[u];
    nlohmann::json e = {{"name", n.name},
                        {"text", n.text},
                        {"kind", n.kind == InsertedNode::Kind::Copy ? "copy" : "clone"},
                        {"target", nameOr(program, n.target)},
                        {"value", nameOr(program, n.value)},
                        {"clone", n.clone ? nlohmann::json(r.inserted[*n.clone].name) : nlohmann::json(nullptr)},
                        {"output_index", n.kind == InsertedNode::Kind::Copy ? nlohmann::json(n.outputIndex) : nlohmann::json(nullptr)},
                        {"position", n.placedIndex},
                        {"after", n.anchor < 0 ? nlohmann::json(nullptr) : nameOr(program, static_cast<NodeId>(n.anchor))},
                        {"minimal", nullptr},
                        {"explanation", nullptr},
                        {"rule", nullptr},
                        {"binding", nullptr},
                        {"core", nlohmann::json::array()},
                        {"earliest_after", nullptr},
                        {"core_explanation", nullptr},
                        {"agrees_with_core", nullptr},
                        {"disagreement", nullptr}};
    for (const proofs::InsertedVerdict& v : r.verdicts) {
      if (v.inserted != u) continue;
      e["minimal"] = v.minimal ? nlohmann::json(*v.minimal) : nlohmann::json(nullptr);
      e["explanation"] = v.explanation;
      if (!v.rule.empty()) e["rule"] = v.rule;
      if (!v.bindingNode.empty()) e["binding"] = v.bindingNode;
      for (std::size_t id : v.core) e["core"].push_back(r.dependenceNames[id]);
      if (!v.earliestAfter.empty()) e["earliest_after"] = v.earliestAfter;
      if (v.coreExplanation)
        e["core_explanation"] = {{"rule", std::string(toString(v.coreExplanation->rule))},
                                 {"after", v.coreExplanation->bindingNode},
                                 {"why", v.coreExplanation->text}};
      if (v.agreesWithCore) e["agrees_with_core"] = *v.agreesWithCore;
      if (!v.disagreement.empty()) e["disagreement"] = v.disagreement;
    }
    j["inserted"].push_back(std::move(e));
  }
  j["disagreements"] = r.disagreements;
  j["dependences"] = r.dependences.size();
  j["queries"] = r.queries;
  j["rlimit_used"] = r.rlimitUsed;
  j["solver_seconds"] = r.seconds;
  j["seconds"] = r.totalSeconds;
  return j;
}

std::vector<std::string> brokenConstraints(const proofs::OrderingReport& report, oracle::ViewMode mode) {
  const std::uint8_t bit = mode == oracle::ViewMode::CopyViews ? 1 : 2;
  std::vector<std::string> texts;
  for (const proofs::Violation& v : report.violations)
    if (v.live && (report.dependences[v.dependence].modes & bit)) texts.push_back(v.text);
  return texts;
}

}  // namespace wb::cli
