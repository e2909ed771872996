// proofs/equivalence.cpp: the equivalence queries, the oracle replay and the verdicts.
#include "proofs/equivalence.h"

#include "proofs/smt.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace wb::proofs {

std::string_view toString(EquivalenceVerdict verdict) {
  switch (verdict) {
    case EquivalenceVerdict::Equivalent: return "equivalent";
    case EquivalenceVerdict::NotEquivalent: return "not-equivalent";
    case EquivalenceVerdict::Disagreement: return "disagreement";
    case EquivalenceVerdict::Unknown: return "unknown";
  }
  return "?";
}

int EquivalenceReport::exitCode() const {
  switch (verdict) {
    case EquivalenceVerdict::Equivalent: return 0;
    case EquivalenceVerdict::NotEquivalent:
    case EquivalenceVerdict::Disagreement: return 1;
    case EquivalenceVerdict::Unknown: return 3;
  }
  return 3;
}

const Counterexample* EquivalenceReport::counterexample() const {
  for (const ModeResult& m : modes)
    if (m.counterexample) return &*m.counterexample;
  return nullptr;
}

namespace {

using oracle::Tier;
using oracle::ViewMode;

constexpr ViewMode kModes[] = {ViewMode::CopyViews, ViewMode::AliasViews};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The tier the oracle interprets both programs in: the element tier when every compile of
// check() succeeds there (both view modes, BEFORE as the reference, AFTER as a placed
// program), else the storage tier, with the element tier's reason.
Tier oracleTier(const PreparedPair& pair, std::string& reason) {
  for (ViewMode mode : kModes) {
    oracle::ExecOptions options;
    options.tier = Tier::Element;
    options.viewMode = mode;
    Result<oracle::Executable> before = oracle::compile(pair.before, pair.beforeSchemas, options);
    if (!before) {
      reason = "BEFORE: " + (before.errors.empty() ? std::string("cannot compile") : before.errors.front().message);
      return Tier::Storage;
    }
    options.placedProgram = true;
    Result<oracle::Executable> after = oracle::compile(pair.after, pair.afterSchemas, options);
    if (!after) {
      reason = "AFTER: " + (after.errors.empty() ? std::string("cannot compile") : after.errors.front().message);
      return Tier::Storage;
    }
  }
  return Tier::Element;
}

std::uint64_t numeral(const z3::expr& e) {
  std::uint64_t v = 0;
  if (e.is_numeral() && e.is_numeral_u64(v)) return v;
  return 0;
}

// An observed element pair that may differ.
struct Candidate {
  bool isOutput;
  std::size_t index, element;
  std::string label;
  z3::expr before, after;
};

// The oracle's runs of BEFORE (S_par) and AFTER (placed) in one view mode, on given inputs.
struct Replayer {
  const PreparedPair& pair;
  Tier tier;
  ViewMode mode;
  std::optional<oracle::Executable> before, after;
  std::string error;

  // `behaviour`: the oracle's behaviour draw of the ops without a schema (oracle.h:
  // HavocBehaviour), the same in both programs.
  Replayer(const PreparedPair& p, Tier t, ViewMode m, unsigned behaviour = 0) : pair(p), tier(t), mode(m) {
    oracle::ExecOptions options;
    options.tier = tier;
    options.viewMode = mode;
    options.behaviour = behaviour;
    Result<oracle::Executable> b = oracle::compile(pair.before, pair.beforeSchemas, options);
    options.placedProgram = true;
    Result<oracle::Executable> a = oracle::compile(pair.after, pair.afterSchemas, options);
    if (!b || !a) {
      error = "the oracle cannot compile " + std::string(!b ? "BEFORE" : "AFTER") + " in the " +
              std::string(oracle::toString(tier)) + " tier: " +
              ((!b ? b.errors : a.errors).empty() ? std::string("?") : (!b ? b.errors : a.errors).front().message);
      return;
    }
    before = *b;
    after = *a;
  }

  std::optional<oracle::Difference> difference(oracle::InputSet inputs) const {
    const oracle::RunResult x = oracle::run(*before, oracle::Semantics::Par, inputs);
    const oracle::RunResult y = oracle::run(*after, oracle::Semantics::Placed, inputs);
    return oracle::firstDifference(x, y);
  }
};

std::string describeBehaviour(const Vocabulary::Choice& c, const z3::model& model, const std::map<std::string, std::string>& names) {
  const z3::expr value = model.eval(c.term, true);
  auto it = names.find(c.nodeKey);
  const std::string node = "%" + (it == names.end() ? c.nodeKey : it->second);
  if (c.what == "result") {
    const std::uint64_t v = numeral(value);
    if (v == 0) return {};
    return node + " returns an alias of its tensor argument " + std::to_string(v - 1) + " (by its encoding's numbering)";
  }
  if (!value.is_true()) return {};
  return node + " " + c.what;
}

// The Z3 context of this thread's queries, made on first use and kept to the end of the
// process. Z3 4.8.12 takes time proportional to the depth of the deepest term ever built in a
// context to delete it (a 300-node program's context took 0.1 s of CPU, more than building
// and solving its query), so the queries share one context rather than deleting one each.
// Terms are reference counted and freed as the queries drop them; what stays is the context.
// A context a wall-clock guard has interrupted is replaced (and kept too) before the next
// query: whether Z3 4.8.12 clears an interrupt for the next check is not documented. A context
// that reached the memory limit is replaced and deleted: its memory is wanted back.
z3::context*& threadContextSlot() {
  thread_local z3::context* context = nullptr;
  return context;
}
z3::context& threadContext() {
  z3::context*& slot = threadContextSlot();
  if (!slot) slot = new z3::context;  // deliberately never deleted (see above)
  return *slot;
}
void retireThreadContext(bool release) {
  thread_local std::vector<z3::context*>* retired = new std::vector<z3::context*>;  // reachable, never deleted
  if (release) delete threadContextSlot();  // its memory is wanted back (a memory limit), whatever it costs
  else retired->push_back(threadContextSlot());
  threadContextSlot() = nullptr;
}

ModeResult checkModeTerms(const PreparedPair& pair, Tier tier, ViewMode mode, const EquivalenceOptions& options,
                     const std::map<std::string, std::string>& names, bool& dependsOnViewMode,
                     std::vector<std::string>& dumped, bool& interrupted) {
  ModeResult result;
  result.viewMode = mode;
  z3::context& ctx = threadContext();
  Vocabulary vocabulary(ctx);
  SymbolicOptions so;
  so.tier = tier;
  so.viewMode = mode;
  so.memoryMb = options.smt.memoryMb;
  so.placed = false;
  Result<SymbolicRun> before = execute(pair.before, pair.beforeSchemas, pair.beforeKeys, vocabulary, so);
  so.placed = true;
  Result<SymbolicRun> after = before ? execute(pair.after, pair.afterSchemas, pair.afterKeys, vocabulary, so) : Result<SymbolicRun>{};
  if (!before || !after) {
    const std::vector<Diagnostic>& e = !before ? before.errors : after.errors;
    result.verdict = EquivalenceVerdict::Unknown;
    result.detail = "the symbolic " + std::string(oracle::toString(tier)) + " tier cannot encode " +
                    (!before ? "BEFORE" : "AFTER") + ": " + (e.empty() ? std::string("?") : e.front().message);
    interrupted = result.detail.find("SmtOptions::memoryMb") != std::string::npos;
    return result;
  }
  dependsOnViewMode = before->dependsOnViewMode || after->dependsOnViewMode;

  // The element pairs compared, and those whose terms are not the same term.
  std::vector<Candidate> candidates;
  std::optional<std::string> shapeDifference;
  for (const bool isOutput : {false, true}) {
    const auto& xs = isOutput ? before->outputs : before->placeholders;
    const auto& ys = isOutput ? after->outputs : after->placeholders;
    for (std::size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
      if (xs[i].values.size() != ys[i].values.size() && !shapeDifference)
        shapeDifference = (isOutput ? "" : "placeholder ") + xs[i].label + " has " + std::to_string(xs[i].values.size()) +
                          " element(s) in BEFORE and " + std::to_string(ys[i].values.size()) + " in AFTER";
      for (std::size_t e = 0; e < xs[i].values.size() && e < ys[i].values.size(); ++e) {
        ++result.comparedElements;
        if (z3::eq(xs[i].values[e], ys[i].values[e])) continue;
        candidates.push_back({isOutput, i, e, xs[i].label, xs[i].values[e], ys[i].values[e]});
      }
    }
  }
  result.differentTerms = candidates.size();

  // The SMT core alone (SmtOptions::coreSolver): these queries are congruence closure over
  // uninterpreted functions, which Z3's default front end bit-blasts first at 40x the cost.
  SmtOptions smt = options.smt;
  smt.coreSolver = true;
  Solver solver(ctx, smt, options.dumpName + "-" + std::string(oracle::toString(mode)));
  z3::expr_vector differs(ctx);
  for (const Candidate& c : candidates) differs.push_back(c.before != c.after);
  solver.add(z3::mk_or(differs));
  // The behaviour the oracle gives schema-less ops, as named facts a query may assume.
  std::vector<std::size_t> oracleBehaviour;
  for (const z3::expr& lit : vocabulary.oracleBehaviour()) oracleBehaviour.push_back(solver.track(lit, "as the oracle's draw 0 runs it"));
  auto keep = [&](const QueryResult& q) {
    if (!q.dumpFile.empty()) dumped.push_back(q.dumpFile);
    if (q.unknown() && (q.reason.starts_with("timeout") || q.reason.starts_with("memory limit"))) interrupted = true;
  };

  const auto start = std::chrono::steady_clock::now();
  QueryResult first;
  first.answer = QueryResult::Answer::Unsat;
  if (shapeDifference) {
    first.answer = QueryResult::Answer::Sat;
  } else if (!candidates.empty() || !options.smt.dumpDir.empty()) {
    first = solver.check({}, "an input, interpretation of the ops and behaviour of the schema-less ops under which an "
                             "observed element of BEFORE (S_par) and AFTER (placed) differs, " +
                                 std::string(oracle::toString(mode)) + ", " + std::string(oracle::toString(tier)) + " tier");
    keep(first);
  }
  if (first.unsat()) {
    result.solverMs = msSince(start);
    result.verdict = EquivalenceVerdict::Equivalent;
    // The proof covers the oracle's interpretation: a few seeded runs of the oracle must agree
    // (a difference is a bug of wbcheck, in the symbolic semantics or in the oracle).
    const Replayer replayer(pair, tier, mode);
    for (int k = 0; replayer.error.empty() && k < options.confirmInputSets; ++k)
      if (std::optional<oracle::Difference> d = replayer.difference(oracle::InputSet{options.replaySeed, k, nullptr})) {
        result.verdict = EquivalenceVerdict::Disagreement;
        result.detail = "the solver proves the programs equivalent, but the oracle shows a difference on seed " +
                        std::to_string(options.replaySeed) + ", input set " + std::to_string(k) +
                        ": a bug of wbcheck (the symbolic semantics and the oracle's differ)";
        Counterexample cx;
        cx.viewMode = mode;
        cx.confirmed = true;
        cx.replayedWith = "seed " + std::to_string(options.replaySeed) + ", input set " + std::to_string(k);
        cx.replayInputSet = k;
        cx.difference = *d;
        result.counterexample = std::move(cx);
        break;
      }
    return result;
  }
  if (first.unknown()) {
    result.solverMs = msSince(start);
    result.verdict = EquivalenceVerdict::Unknown;
    result.detail = "the solver gave up: " + first.reason;
    return result;
  }
  // A counterexample: first one where the schema-less ops behave as the oracle's draw 0 has
  // them (reads only), the most direct to replay.
  Counterexample cx;
  cx.viewMode = mode;
  std::optional<z3::model> model = first.model;
  bool needsBehaviour = false;
  if (!shapeDifference && !oracleBehaviour.empty()) {
    const QueryResult asOracle =
        solver.check(oracleBehaviour, "the same, with every schema-less op as the oracle's behaviour draw 0 runs it");
    keep(asOracle);
    if (asOracle.sat()) model = asOracle.model;
    needsBehaviour = asOracle.unsat();
  }
  result.solverMs = msSince(start);
  oracle::InputValues values;
  if (model) {
    for (const Candidate& c : candidates)
      if (model->eval(c.before != c.after, true).is_true()) {
        cx.solverObservation = c.label;
        cx.solverElement = c.element;
        break;
      }
    for (const Vocabulary::Input& in : vocabulary.inputs()) {
      std::vector<std::uint64_t> elements;
      if (in.isArray)
        for (std::int64_t i = 0; i < in.size; ++i)
          elements.push_back(numeral(model->eval(z3::select(in.term, vocabulary.bv(static_cast<std::uint64_t>(i))), true)));
      else
        elements.push_back(numeral(model->eval(in.term, true)));
      cx.inputs[in.oracleName] = elements;
    }
    for (const Vocabulary::Choice& c : vocabulary.choices())
      if (std::string b = describeBehaviour(c, *model, names); !b.empty()) cx.behaviours.push_back(std::move(b));
  } else if (shapeDifference) {
    cx.solverObservation = *shapeDifference;
  }
  values.byName.insert(cx.inputs.begin(), cx.inputs.end());

  // The oracle's replay: the model's inputs, then seeded input sets; in behaviour draw 0,
  // then, for a program with ops without a schema, in the oracle's other draws (the draws
  // differ from draw 0 only there).
  const bool drawsDiffer = !vocabulary.choices().empty();
  const int draws = drawsDiffer ? std::max(options.replayBehaviours, 1) : 1;
  for (int draw = 0; draw < draws && !cx.confirmed; ++draw) {
    const Replayer replayer(pair, tier, mode, static_cast<unsigned>(draw));
    if (!replayer.error.empty()) {
      if (draw > 0) continue;  // a draw the oracle cannot compile: the next one
      result.verdict = EquivalenceVerdict::Disagreement;
      result.detail = "the solver refutes, but " + replayer.error;
      result.counterexample = cx;
      return result;
    }
    const std::string inDraw = draw == 0 ? "" : ", behaviour draw " + std::to_string(draw);
    if (model) {
      if (std::optional<oracle::Difference> d = replayer.difference(oracle::InputSet{0, 0, &values})) {
        cx.confirmed = true;
        cx.replayedWith = "the solver's model" + inDraw;
        cx.replayBehaviour = static_cast<unsigned>(draw);
        cx.difference = *d;
      }
    }
    for (int k = 0; !cx.confirmed && k < options.replayInputSets; ++k)
      if (std::optional<oracle::Difference> d = replayer.difference(oracle::InputSet{options.replaySeed, k, nullptr})) {
        cx.confirmed = true;
        cx.replayedWith = "seed " + std::to_string(options.replaySeed) + ", input set " + std::to_string(k) + inDraw;
        cx.replayInputSet = k;
        cx.replayBehaviour = static_cast<unsigned>(draw);
        cx.difference = *d;
      }
  }
  if (cx.confirmed) {
    result.verdict = EquivalenceVerdict::NotEquivalent;
  } else {
    result.verdict = EquivalenceVerdict::Disagreement;
    if (needsBehaviour)
      result.detail = "the solver refutes only where an op without a schema writes or aliases an argument, which the "
                      "contract allows (DESIGN §5); none of the oracle's " + std::to_string(draws) +
                      " behaviour draws shows a difference";
    else
      result.detail = "the solver refutes, but the oracle shows no difference on the model's inputs nor on " +
                      std::to_string(options.replayInputSets) +
                      " seeded input sets: a bug of wbcheck (the symbolic semantics and the oracle's differ), or a "
                      "counterexample that needs an interpretation of the ops the oracle never uses";
  }
  result.counterexample = std::move(cx);
  return result;
}

// Z3 may refuse a term or a query (out of memory, an interrupt while building): the mode has
// no verdict then, and its context is not used again.
ModeResult checkMode(const PreparedPair& pair, Tier tier, ViewMode mode, const EquivalenceOptions& options,
                     const std::map<std::string, std::string>& names, bool& dependsOnViewMode,
                     std::vector<std::string>& dumped, bool& interrupted) {
  try {
    return checkModeTerms(pair, tier, mode, options, names, dependsOnViewMode, dumped, interrupted);
  } catch (const z3::exception& e) {
    ModeResult result;
    result.viewMode = mode;
    result.verdict = EquivalenceVerdict::Unknown;
    result.detail = std::string("z3 error: ") + e.msg();
    interrupted = true;
    return result;
  }
}

}  // namespace

EquivalenceReport checkEquivalence(const PreparedPair& pair, const EquivalenceOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  EquivalenceReport report;
  report.tier = oracleTier(pair, report.tierReason);
  std::map<std::string, std::string> names;  // node key -> node name, for reports
  for (std::size_t i = 0; i < pair.afterKeys.nodes.size(); ++i) names[pair.afterKeys.nodes[i]] = pair.after.graph.nodes[i].name;
  for (std::size_t i = 0; i < pair.beforeKeys.nodes.size(); ++i) names[pair.beforeKeys.nodes[i]] = pair.before.graph.nodes[i].name;
  for (ViewMode mode : kModes) {
    bool dependsOnViewMode = true, interrupted = false;
    report.modes.push_back(checkMode(pair, report.tier, mode, options, names, dependsOnViewMode, report.dumped, interrupted));
    // The query's terms are gone with checkMode's scope.
    if (interrupted) retireThreadContext(report.modes.back().detail.find("memory") != std::string::npos);
    if (!dependsOnViewMode) break;  // the alias-views queries would be the same
  }
  auto any = [&](EquivalenceVerdict v) {
    return std::any_of(report.modes.begin(), report.modes.end(), [&](const ModeResult& m) { return m.verdict == v; });
  };
  report.verdict = any(EquivalenceVerdict::NotEquivalent)  ? EquivalenceVerdict::NotEquivalent
                   : any(EquivalenceVerdict::Disagreement) ? EquivalenceVerdict::Disagreement
                   : any(EquivalenceVerdict::Unknown)      ? EquivalenceVerdict::Unknown
                                                : EquivalenceVerdict::Equivalent;
  report.totalMs = msSince(start);
  return report;
}

std::string formatReport(const EquivalenceReport& report, const PreparedPair& pair) {
  std::ostringstream s;
  auto hex = [](std::optional<std::uint64_t> v) {
    if (!v) return std::string("(missing)");
    std::ostringstream h;
    h << "0x" << std::hex << *v;
    return h.str();
  };
  for (const std::string& note : pair.notes) s << "note: " << note << "\n";
  s << "matched " << pair.matchedNodes << " node(s) of AFTER to BEFORE's by structure";
  if (!pair.unmatched.empty()) {
    s << "; AFTER's own:";
    for (const std::string& n : pair.unmatched) s << " %" << n;
  }
  s << "\n" << oracle::toString(report.tier) << " tier";
  if (!report.tierReason.empty()) s << " (" << report.tierReason << ")";
  s << "\n";
  for (const ModeResult& m : report.modes) {
    s << oracle::toString(m.viewMode) << (report.modes.size() == 1 ? " (alias-views the same: no *_copy view)" : "") << ": "
      << toString(m.verdict) << " (" << m.comparedElements << " element(s) compared, "
      << m.differentTerms << " not identical as terms, solver " << static_cast<long long>(m.solverMs + 0.5) << " ms)\n";
    if (!m.detail.empty()) s << "  " << m.detail << "\n";
    if (!m.counterexample) continue;
    const Counterexample& c = *m.counterexample;
    if (!c.solverObservation.empty())
      s << "  solver: " << c.solverObservation << " element " << c.solverElement << " differs\n";
    for (const std::string& b : c.behaviours) s << "  behaviour: " << b << "\n";
    if (c.confirmed) {
      const oracle::Difference& d = c.difference;
      s << "  oracle (" << c.replayedWith << "): " << (d.isOutput ? "" : "placeholder ") << d.label;
      if (report.tier == oracle::Tier::Element) s << " element " << d.element;
      s << ": BEFORE " << hex(d.expected) << ", AFTER " << hex(d.actual) << "\n";
    }
    if (c.replayedWith == "the solver's model" && !c.inputs.empty()) {
      s << "  inputs:";
      for (const auto& [name, values] : c.inputs) {
        s << " " << name << "=[";
        for (std::size_t i = 0; i < values.size() && i < 8; ++i) s << (i ? ", " : "") << hex(values[i]);
        if (values.size() > 8) s << ", ...";
        s << "]";
      }
      s << "\n";
    }
  }
  for (const std::string& f : report.dumped) s << "smt2: " << f << "\n";
  s << "verdict: " << toString(report.verdict) << "\n";
  return s.str();
}

}  // namespace wb::proofs
