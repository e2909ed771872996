// proofs/ordering_words.cpp: names and the report of the ordering proof in words.
#include <algorithm>
#include <sstream>

#include "proofs/ordering.h"
#include "proofs/ordering_internal.h"

namespace wb::proofs {

std::string_view toString(DepKind kind) {
  switch (kind) {
    case DepKind::AfterPlaceholders: return "R0";
    case DepKind::AfterValue: return "R1";
    case DepKind::AfterTargetAccess: return "R2";
    case DepKind::AfterValueWrite: return "R3";
    case DepKind::BeforeOverwrite: return "C";
    case DepKind::TargetOrder: return "C-order";
    case DepKind::BeforeOutput: return "END";
  }
  return "?";
}

std::string_view toString(FaultKind kind) {
  switch (kind) {
    case FaultKind::PlacementFailed: return "placement-failed";
    case FaultKind::PlacedInvalid: return "placed-program-invalid";
    case FaultKind::MissingWriteBack: return "missing-write-back";
    case FaultKind::UnexpectedCopy: return "unexpected-copy";
    case FaultKind::DuplicateCopy: return "duplicate-copy";
    case FaultKind::DroppedNode: return "dropped-node";
    case FaultKind::OutputLayout: return "output-layout";
  }
  return "?";
}

std::size_t OrderingReport::liveViolations() const {
  return static_cast<std::size_t>(std::count_if(violations.begin(), violations.end(), [](const Violation& v) { return v.live; }));
}

namespace detail {

std::string modesText(std::uint8_t modes) {
  if (modes == 1) return " [copy-views mode]";
  if (modes == 2) return " [alias-views mode]";
  return "";
}

}  // namespace detail

std::string formatOrderingReport(const OrderingReport& r, std::string_view placementName) {
  std::ostringstream s;
  s << "ordering proof of placement " << placementName << ": " << r.inserted.size() << " inserted node(s), "
    << r.dependences.size() << " dependences (both view modes), " << r.queries << " queries\n";
  for (const StructuralFault& f : r.faults) s << "FAULT (" << toString(f.kind) << "): " << f.text << "\n";
  if (r.satisfied) {
    s << "satisfied: " << (*r.satisfied ? "yes (every dependence holds at the placed positions)" : "no") << "\n";
    for (const Violation& v : r.violations)
      s << (v.live ? "  VIOLATED: " : "  violated, unobservable: ") << v.text << "\n";
    if (r.moreViolations) s << "  (more violations not listed)\n";
  }
  if (r.minimal) {
    s << "minimal: " << (*r.minimal ? "yes (no inserted node can go before the node it follows)" : "no")
      << (r.minimalityRequired ? "" : " (not required of this placement)") << "\n";
    for (const InsertedVerdict& v : r.verdicts) {
      const InsertedNode& n = r.inserted[v.inserted];
      s << "  %" << n.name << " = " << n.text << " at " << n.placedIndex << (v.minimal == true ? "" : " NOT MINIMAL")
        << ": " << v.explanation;
      if (!v.rule.empty()) s << "  [" << v.rule << "]";
      s << "\n";
      if (v.agreesWithCore == false) s << "    DISAGREES with core: " << v.disagreement << "\n";
    }
  }
  s << "verdict: " << toString(r.verdict);
  if (!r.reason.empty()) s << " (" << r.reason << ")";
  s << "\n";
  return s.str();
}

}  // namespace wb::proofs
