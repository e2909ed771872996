// proofs/ordering.cpp: the ordering proof (see ordering.h for what is proved and how).
#include "proofs/ordering.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "core/validate.h"
#include "proofs/ordering_internal.h"
#include "proofs/ordering_words.h"

namespace wb::proofs {

namespace {

using namespace detail;

// ---------------------------------------------------------------------------------------------
// The queries.

class Prover {
 public:
  Prover(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas, bool requireMinimal,
         const OrderingOptions& options, z3::context& context, Solver& solver, std::vector<z3::expr>& positionPool)
      : program_(program),
        placed_(placed),
        schemas_(schemas),
        options_(options),
        context_(&context),
        solver_(&solver),
        positionPool_(&positionPool),
        queriesBefore_(solver.queries()) {
    report_.minimalityRequired = requireMinimal;
  }

  OrderingReport run() {
    const auto start = std::chrono::steady_clock::now();
    prove();
    report_.totalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(report_);
  }

 private:
  const Program& program_;
  const PlacedProgram& placed_;
  const SchemaTable& schemas_;
  const OrderingOptions& options_;
  OrderingReport report_;
  // The effects of the view modes: one derivation for both when they coincide, else one each.
  Effects effects_[2];
  std::vector<ModeEffects> modes_;
  std::vector<std::size_t> placedOf_;
  std::optional<Words> words_;
  z3::context* context_;
  Solver* solver_;
  std::vector<z3::expr>* positionPool_;
  std::size_t queriesBefore_;
  std::vector<z3::expr> pos_;    // per inserted node
  std::vector<z3::expr> facts_;  // per dependence
  std::vector<std::size_t> idOfDependence_;  // per dependence: its tracked id in scope, or kNone
  std::vector<std::size_t> dependenceOfId_;  // per tracked id in scope: its dependence, or kNone
  // Per tracked id in scope: the inserted nodes whose positions its fact relates (kNone for a
  // constant: the position of an original node, or the placed position).
  std::vector<std::pair<std::size_t, std::size_t>> endsOfId_;
  std::int64_t spacing_ = 1;

  void unknown(std::string why) {
    if (report_.verdict != Verdict::Unknown || report_.reason.empty()) report_.reason = std::move(why);
    report_.verdict = Verdict::Unknown;
  }

  void prove() {
    report_.verdict = Verdict::Proved;
    if (placed_.failure) {
      report_.faults.push_back({FaultKind::PlacementFailed, "the placement failed: " + *placed_.failure});
      return finish();
    }
    const Program& placedProgram = placed_.keptInput ? program_ : placed_.program;
    if (std::vector<Diagnostic> errors = validate(placedProgram); !errors.empty()) {
      report_.faults.push_back({FaultKind::PlacedInvalid, "the placed program is invalid: " + formatAll(errors)});
      return finish();
    }
    // Both view modes: derived once when no node is treated differently by them (no `*_copy`
    // view variant that the alias-views mode makes a view), and every dependence then holds
    // in both (modes 3), as the union of two equal derivations would say.
    effects_[0] = deriveEffects(program_, schemas_, ViewMode::CopyViews);
    if (effects_[0].viewModesDiffer) {
      effects_[1] = deriveEffects(program_, schemas_, ViewMode::AliasViews, effects_[0]);
      modes_ = {{&effects_[0], 1}, {&effects_[1], 2}};
    } else {
      modes_ = {{&effects_[0], 3}};
    }
    const std::vector<MutationOutput> mutations = mutationOutputs(program_, schemas_);
    Matching matching = matchPlacement(program_, placedProgram, mutations, modes_);
    if (matching.outside) {
      unknown(*matching.outside);
      return finish();
    }
    report_.inserted = std::move(matching.inserted);
    report_.faults = std::move(matching.faults);
    placedOf_ = std::move(matching.placedOf);
    words_.emplace(program_, report_.inserted, placedOf_);
    report_.dependences = deriveDependences(program_, report_.inserted, modes_, placedOf_, options_.dropKind);
    encode();
    // One scope for the proof: every dependence is tracked once, and each query enables the
    // ones it asks about.
    openScope();
    satisfied();
    if (report_.verdict != Verdict::Unknown && report_.satisfied == true && report_.violations.empty() && options_.minimality)
      minimality();
    closeScope();
    finish();
  }

  void finish() {
    report_.queries = solver_->queries() - queriesBefore_;
    if (report_.verdict == Verdict::Unknown) return;
    if (!report_.faults.empty() || report_.liveViolations() > 0) report_.verdict = Verdict::Refuted;
    else if (report_.minimalityRequired && report_.minimal == false) report_.verdict = Verdict::Refuted;
    else report_.verdict = Verdict::Proved;
  }

  // The position of inserted node u: `pos<u>`, made once per prover and reused by every proof
  // (new names cost Z3 new symbols and terms), or `pos_<name>` when the queries are dumped.
  z3::expr position(std::size_t u) {
    if (!options_.smt.dumpDir.empty()) return context_->int_const(("pos_" + smtSymbol(report_.inserted[u].name)).c_str());
    while (positionPool_->size() <= u) positionPool_->push_back(context_->int_const(("pos" + std::to_string(positionPool_->size())).c_str()));
    return (*positionPool_)[u];
  }

  std::int64_t originalPosition(NodeId i) const { return spacing_ * (static_cast<std::int64_t>(i) + 1); }

  const Effects& effectsOf(const Dependence& d) const { return effectsIn(modes_, (d.modes & 1) ? 1 : 2); }

  std::string dependenceName(const Dependence& d) const {
    const Words& w = *words_;
    std::string s = std::string(toString(d.kind)) + " " + w.insertedLabel(d.inserted) + (d.before ? " before " : " after ");
    s += d.other ? w.insertedLabel(*d.other) : w.node(d.node);
    return s;
  }

  void encode() {
    z3::context& c = *context_;
    spacing_ = static_cast<std::int64_t>(report_.inserted.size()) + 1;
    for (std::size_t u = 0; u < report_.inserted.size(); ++u) pos_.push_back(position(u));
    for (const Dependence& d : report_.dependences) {
      const z3::expr& p = pos_[d.inserted];
      // Strict orders over integers as the bounds `x - y <= -1`, `x <= c - 1`, `x >= c + 1`:
      // the same facts in the form Z3's difference logic keeps, without a negation for its
      // rewriter to take apart (a tenth less of Z3's time per fact).
      facts_.push_back(d.other ? (d.before ? p - pos_[*d.other] <= -1 : pos_[*d.other] - p <= -1)
                               : (d.before ? p <= c.int_val(originalPosition(d.node) - 1) : p >= c.int_val(originalPosition(d.node) + 1)));
      report_.dependenceNames.push_back(dependenceName(d));
    }
    idOfDependence_.assign(report_.dependences.size(), kNone);
  }

  // The proof runs in one solver scope (Solver::push): its dependences, placed positions and
  // questions are tracked there once, each query enables the ones it asks about, and nothing is
  // left for the next proof. (A scope per question would cost a pop each, which takes longer
  // than the question's query in a large program.)
  void openScope() { solver_->push(); }
  void closeScope() {
    solver_->pop();
    for (std::size_t id = solver_->tracked(); id < dependenceOfId_.size(); ++id)
      if (dependenceOfId_[id] != kNone) idOfDependence_[dependenceOfId_[id]] = kNone;
    dependenceOfId_.resize(solver_->tracked());
    endsOfId_.resize(solver_->tracked());
  }
  // Dependence `dep` as a tracked assertion of the open scope; its id.
  std::size_t track(std::size_t dep) {
    if (idOfDependence_[dep] != kNone) return idOfDependence_[dep];
    const Dependence& d = report_.dependences[dep];
    const std::size_t id = solver_->track(facts_[dep], report_.dependenceNames[dep]);
    dependenceOfId_.push_back(dep);
    endsOfId_.emplace_back(d.inserted, d.other.value_or(kNone));
    idOfDependence_[dep] = id;
    return id;
  }
  // A fact about the position of inserted node u alone.
  std::size_t trackOther(std::size_t u, const z3::expr& fact, std::string name) {
    const std::size_t id = solver_->track(fact, std::move(name));
    dependenceOfId_.push_back(kNone);
    endsOfId_.emplace_back(u, kNone);
    return id;
  }

  // The facts are difference constraints; their graph has one vertex per inserted node, one for
  // the constants, and one edge per fact. A set of facts whose edges form one simple cycle is a
  // minimal core when unsat: any proper subset forms a forest, and difference constraints over
  // a forest are satisfiable. Z3's conflict in difference logic is such a cycle as a rule.
  bool formsOneCycle(const std::vector<std::size_t>& ids) const {
    std::map<std::size_t, std::vector<std::size_t>> adjacent;  // vertex -> the facts at it
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto [a, b] = endsOfId_[ids[i]];
      adjacent[a].push_back(i);
      adjacent[b].push_back(i);
    }
    for (const auto& [vertex, facts] : adjacent)
      if (facts.size() != 2) return false;
    // Every vertex has degree 2: a union of cycles; one cycle when a walk visits every fact.
    std::vector<bool> seen(ids.size(), false);
    std::size_t fact = 0, vertex = endsOfId_[ids[0]].first, visited = 0;
    while (!seen[fact]) {
      seen[fact] = true;
      ++visited;
      const auto [a, b] = endsOfId_[ids[fact]];
      vertex = vertex == a ? b : a;
      const std::vector<std::size_t>& at = adjacent[vertex];
      fact = at[0] == fact ? at[1] : at[0];
    }
    return visited == ids.size();
  }

  // A query whose unsat core is minimal (no proper subset is a core): Z3's core when it forms
  // one cycle, else minimised by deletion (each fact dropped in turn, the core of the next unsat
  // answer kept), every step a query of its own. Unknown if any step is.
  QueryResult checkMinimalCore(const std::vector<std::size_t>& enabled, std::string_view what) {
    QueryResult r = solver_->check(enabled, what);
    account(r);
    if (!r.unsat() || r.core.empty() || formsOneCycle(r.core)) return r;
    std::vector<std::size_t> core = r.core;
    for (std::size_t i = 0; i < core.size();) {
      std::vector<std::size_t> without = core;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      QueryResult m = solver_->check(without, what);
      account(m);
      if (m.unknown()) return m;
      if (m.sat()) ++i;  // core[i] is needed
      else core = m.core;  // a subset of `without` that keeps core[0..i): each is needed, and they
                           // stay its smallest ids
    }
    r.core = std::move(core);
    return r;
  }
  // The dependences in a core of the open scope.
  std::vector<std::size_t> dependencesOf(const std::vector<std::size_t>& core) const {
    std::vector<std::size_t> deps;
    for (std::size_t id : core)
      if (id < dependenceOfId_.size() && dependenceOfId_[id] != kNone) deps.push_back(dependenceOfId_[id]);
    std::sort(deps.begin(), deps.end());
    return deps;
  }

  // Where the placement put inserted node u, as a tracked fact.
  std::size_t trackPlacement(std::size_t u) {
    const InsertedNode& n = report_.inserted[u];
    const std::int64_t at = spacing_ * (n.anchor + 1) + n.rank;
    const std::string where = n.anchor < 0 ? "first" : "right after " + words_->node(static_cast<NodeId>(n.anchor));
    return trackOther(u, pos_[u] == context_->int_val(at), "placed " + words_->insertedLabel(u) + " " + where);
  }

  void account(const QueryResult& r) {
    report_.seconds += r.seconds;
    report_.rlimitUsed += r.rlimitUsed;
  }

  void satisfied() {
    const std::size_t deps = report_.dependences.size();
    std::vector<std::size_t> enabled;
    enabled.reserve(deps + report_.inserted.size());
    for (std::size_t i = 0; i < deps; ++i) enabled.push_back(track(i));
    for (std::size_t u = 0; u < report_.inserted.size(); ++u) enabled.push_back(trackPlacement(u));
    bool anyLive = false;
    while (true) {
      QueryResult r = checkMinimalCore(enabled, "do the placed positions satisfy every dependence?");
      if (r.unknown()) return unknown("satisfaction query: " + r.reason);
      if (r.sat()) break;
      const std::vector<std::size_t> violated = dependencesOf(r.core);
      if (violated.empty()) return unknown("the placed positions contradict each other (no dependence in the core)");
      for (std::size_t dep : violated) {
        const Dependence& d = report_.dependences[dep];
        anyLive = anyLive || d.live;
        if (report_.violations.size() < options_.maxViolations)
          report_.violations.push_back({dep, words_->violation(d, effectsOf(d)), d.live});
        else
          report_.moreViolations = true;
        enabled.erase(std::find(enabled.begin(), enabled.end(), idOfDependence_[dep]));
      }
      if (anyLive && report_.moreViolations) break;
    }
    std::stable_sort(report_.violations.begin(), report_.violations.end(),
                     [](const Violation& a, const Violation& b) { return a.live > b.live; });
    report_.satisfied = report_.liveViolations() == 0 && !report_.moreViolations;
  }

  // ---- minimality ----

  // The inserted nodes that must precede u (transitively), u included.
  std::vector<bool> windowOf(std::size_t u, const std::vector<std::vector<std::size_t>>& preds) const {
    std::vector<bool> in(report_.inserted.size(), false);
    std::vector<std::size_t> stack = {u};
    in[u] = true;
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      for (std::size_t p : preds[v])
        if (!in[p]) {
          in[p] = true;
          stack.push_back(p);
        }
    }
    return in;
  }

  void minimality() {
    const std::size_t k = report_.inserted.size();
    std::vector<std::vector<std::size_t>> preds(k), depsOf(k);
    for (std::size_t i = 0; i < report_.dependences.size(); ++i) {
      const Dependence& d = report_.dependences[i];
      depsOf[d.inserted].push_back(i);
      if (!d.other) continue;
      depsOf[*d.other].push_back(i);
      if (d.before) preds[*d.other].push_back(d.inserted);
      else preds[d.inserted].push_back(*d.other);
    }
    std::map<std::string, const CopyExplanation*, std::less<>> coreByName;
    for (const CopyExplanation& e : placed_.copies) coreByName.emplace(e.copyNode, &e);
    bool all = true;
    for (std::size_t u = 0; u < k; ++u) {
      InsertedVerdict v;
      v.inserted = u;
      if (auto it = coreByName.find(report_.inserted[u].name); it != coreByName.end()) v.coreExplanation = *it->second;
      if (!minimalityOf(u, preds, depsOf, v)) return;
      all = all && (v.minimal.value_or(false) || report_.inserted[u].noOp);
      if (v.agreesWithCore == false) ++report_.disagreements;
      report_.verdicts.push_back(std::move(v));
    }
    report_.minimal = all;
  }

  // The dependences of the window: both ends inside it.
  std::vector<std::size_t> windowDependences(const std::vector<bool>& in,
                                             const std::vector<std::vector<std::size_t>>& depsOf) const {
    std::vector<std::size_t> ids;
    for (std::size_t w = 0; w < in.size(); ++w) {
      if (!in[w]) continue;
      for (std::size_t id : depsOf[w]) {
        const Dependence& d = report_.dependences[id];
        if (d.inserted != w) continue;  // listed once, under its own inserted node
        if (d.other && !in[*d.other]) continue;
        ids.push_back(id);
      }
    }
    return ids;
  }

  // In the open scope: can u go before original node `node`, with the dependences `window`?
  bool feasibleBefore(std::size_t u, std::int64_t node, const std::vector<std::size_t>& window, QueryResult* out) {
    std::vector<std::size_t> enabled;
    enabled.reserve(window.size() + 1);
    for (std::size_t dep : window) enabled.push_back(track(dep));
    enabled.push_back(trackOther(u, pos_[u] <= context_->int_val(originalPosition(static_cast<NodeId>(node)) - 1),
                                 "query " + words_->insertedLabel(u) + " before " + words_->node(static_cast<NodeId>(node))));
    QueryResult r = checkMinimalCore(enabled, "can " + words_->insertedLabel(u) + " go before " +
                                                  words_->node(static_cast<NodeId>(node)) + "?");
    const bool sat = r.sat();
    if (out) *out = std::move(r);
    return sat;
  }

  bool minimalityOf(std::size_t u, const std::vector<std::vector<std::size_t>>& preds,
                    const std::vector<std::vector<std::size_t>>& depsOf, InsertedVerdict& v) {
    const InsertedNode& n = report_.inserted[u];
    if (n.noOp) {
      v.explanation = "a no-op: " + words_->node(n.value) + " is " + words_->node(n.target) +
                      "'s whole storage, so the copy changes nothing wherever it goes (minimality not asked)";
      return true;
    }
    if (n.anchor < 0) {  // nothing to go before
      v.minimal = true;
      v.explanation = "first in the program";
      return true;
    }
    const std::vector<bool> in = windowOf(u, preds);
    const std::vector<std::size_t> window = windowDependences(in, depsOf);
    QueryResult r;
    feasibleBefore(u, n.anchor, window, &r);
    if (r.unknown()) {
      unknown("minimality query of " + words_->insertedLabel(u) + ": " + r.reason);
      return false;
    }
    if (r.unsat()) {
      v.minimal = true;
      v.core = dependencesOf(r.core);
      explain(u, v);
    } else {
      v.minimal = false;
      // Binary search for the earliest original node it may precede (feasibility is monotone).
      std::int64_t lo = 0, hi = n.anchor;  // feasible(hi)
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        QueryResult m;
        const bool ok = feasibleBefore(u, mid, window, &m);
        if (m.unknown()) {
          unknown("minimality query of " + words_->insertedLabel(u) + ": " + m.reason);
          return false;
        }
        if (ok) hi = mid;
        else lo = mid + 1;
      }
      v.earliestAfterNode = lo - 1;
      v.earliestAfter = lo == 0 ? std::string("the start") : words_->node(static_cast<NodeId>(lo - 1));
      v.explanation = "could go right after " + v.earliestAfter + " (before " +
                      words_->node(static_cast<NodeId>(lo)) + "), earlier than right after " +
                      words_->node(static_cast<NodeId>(n.anchor));
    }
    // Core's explanation claims minimality only for `early`; the models explain their own rules.
    if (v.coreExplanation && report_.minimalityRequired) compareWithCore(u, window, v);
    return true;
  }

  // Does dependence d order u after the other end?
  static bool bindsAfter(const Dependence& d, std::size_t u) {
    if (d.inserted == u) return !d.before;
    return d.other && *d.other == u && d.before;
  }

  void explain(std::size_t u, InsertedVerdict& v) {
    // The dependence of the core that binds u itself (the latest of them if several).
    std::optional<std::size_t> best;
    std::int64_t bestAt = -1;
    for (std::size_t id : v.core) {
      const Dependence& d = report_.dependences[id];
      if (!bindsAfter(d, u)) continue;
      std::int64_t at = d.other || d.inserted != u
                            ? static_cast<std::int64_t>(report_.inserted[d.inserted == u ? *d.other : d.inserted].placedIndex)
                            : static_cast<std::int64_t>(placedOf_[d.node]);
      if (!best || at > bestAt) {
        best = id;
        bestAt = at;
      }
    }
    if (!best) {
      v.explanation = "(the core names no dependence of this node)";
      return;
    }
    const Dependence& d = report_.dependences[*best];
    v.explanation = words_->explanation(d, u, effectsOf(d), v.rule, v.bindingNode);
  }

  // Core's reason for u's position is one of the proof's dependences, and it forces u after its
  // anchor together with the constraints of the nodes that must precede u.
  void compareWithCore(std::size_t u, const std::vector<std::size_t>& window, InsertedVerdict& v) {
    const CopyExplanation& e = *v.coreExplanation;
    const InsertedNode& n = report_.inserted[u];
    std::vector<std::size_t> claimed, rest;
    for (std::size_t id : window) {
      const Dependence& d = report_.dependences[id];
      const bool direct = d.inserted == u || (d.other && *d.other == u);
      if (!direct) {
        rest.push_back(id);
        continue;
      }
      if (!bindsAfter(d, u)) continue;
      std::string otherName;
      if (d.other || d.inserted != u) otherName = report_.inserted[d.inserted == u ? *d.other : d.inserted].name;
      else otherName = program_.graph.nodes[d.node].name;
      if (otherName != e.bindingNode) continue;
      const std::string_view k = toString(d.kind);
      bool kindMatches = false;
      switch (e.rule) {
        case CopyRule::R0:
        case CopyRule::R1:
        case CopyRule::R3: kindMatches = k == toString(e.rule); break;
        case CopyRule::R2:  // or after a clone reading the target
          kindMatches = k == toString(e.rule) || d.kind == DepKind::BeforeOverwrite;
          break;
        case CopyRule::CopyOrder: kindMatches = d.kind == DepKind::BeforeOverwrite || d.kind == DepKind::TargetOrder; break;
        case CopyRule::Clone: kindMatches = d.kind == DepKind::AfterValue; break;
        case CopyRule::End: break;
      }
      if (kindMatches) claimed.push_back(id);
    }
    if (claimed.empty()) {
      v.agreesWithCore = false;
      v.disagreement = "core explains " + words_->insertedLabel(u) + " by " + std::string(toString(e.rule)) + " after %" + e.bindingNode +
                       " (\"" + e.text + "\"), but the storage semantics gives no such dependence";
      return;
    }
    // The minimality core already shows it when core's reason holds every dependence of u the
    // core needs (the core with the rest of the window is then a subset of this query).
    if (v.minimal == true) {
      bool covered = true;
      for (std::size_t dep : v.core) {
        const Dependence& d = report_.dependences[dep];
        const bool direct = d.inserted == u || (d.other && *d.other == u);
        if (direct && std::find(claimed.begin(), claimed.end(), dep) == claimed.end()) covered = false;
      }
      if (covered) {
        v.agreesWithCore = true;
        return;
      }
    }
    std::vector<std::size_t> enabled;
    for (std::size_t dep : rest) enabled.push_back(track(dep));
    for (std::size_t dep : claimed) enabled.push_back(track(dep));
    enabled.push_back(trackOther(u, pos_[u] <= context_->int_val(originalPosition(static_cast<NodeId>(n.anchor)) - 1),
                                 "query " + words_->insertedLabel(u) + " before its anchor, by core's reason"));
    QueryResult r = solver_->check(enabled, "does core's reason for " + words_->insertedLabel(u) + " force its position?");
    account(r);
    if (r.unknown()) {
      unknown("comparison with core's explanation: " + r.reason);
      return;
    }
    v.agreesWithCore = r.unsat();
    if (!r.unsat())
      v.disagreement = "core explains " + words_->insertedLabel(u) + " by " + std::string(toString(e.rule)) + " after %" + e.bindingNode +
                       " (\"" + e.text + "\"), but that does not keep it from going earlier";
  }
};

}  // namespace

struct OrderingProver::State {
  // A proof that tracked many facts leaves Z3's solver with structures of its size (Z3 4.8.12
  // does not shrink them when the scope is popped), and every later query pays for them: after
  // the 10^5-node decoder's 8,000 facts, a small program's proof took twice as long. The solver
  // is then made anew (about a millisecond, little beside such a proof).
  OrderingOptions options;
  z3::context context;
  std::optional<Solver> solver;
  std::vector<z3::expr> positionPool;  // see Prover::position
  explicit State(OrderingOptions o) : options(std::move(o)) { freshSolver(); }
  void freshSolver() {
    solver.reset();
    solver.emplace(context, withLogic(options.smt), "ordering");
    // Z3 sets its solver up at the first scope (about half a millisecond): done here, with the
    // prover, so that it is no proof's cost.
    solver->push();
    solver->pop();
  }
  void afterProof(std::size_t factsTracked) {
    // Dumped queries are numbered by their solver: a dumping prover keeps its one solver.
    if (factsTracked > options.freshSolverAfterFacts && options.smt.dumpDir.empty()) freshSolver();
  }
  static SmtOptions withLogic(SmtOptions smt) {
    smt.logic = "QF_IDL";  // every dependence and query is a difference constraint
    smt.minimizeCores = false;  // the proof shows its cores minimal (checkMinimalCore)
    smt.models = false;         // it reads no model
    return smt;
  }
};

OrderingProver::OrderingProver(OrderingOptions options) : state_(std::make_unique<State>(std::move(options))) {}
OrderingProver::~OrderingProver() = default;
OrderingProver::OrderingProver(OrderingProver&&) noexcept = default;
OrderingProver& OrderingProver::operator=(OrderingProver&&) noexcept = default;

OrderingReport OrderingProver::prove(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas,
                                     bool requireMinimal) {
  OrderingReport report = Prover(program, placed, schemas, requireMinimal, state_->options, state_->context,
                                 *state_->solver, state_->positionPool).run();
  state_->afterProof(report.dependences.size() + 2 * report.inserted.size());
  return report;
}

OrderingReport OrderingProver::prove(const Program& program, Placement placement, const SchemaTable& schemas) {
  const PlacedProgram placed = place(program, placement, schemas);
  return prove(program, placed, schemas, placement == Placement::Early);
}

OrderingReport proveOrdering(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas,
                             bool requireMinimal, const OrderingOptions& options) {
  return OrderingProver(options).prove(program, placed, schemas, requireMinimal);
}

OrderingReport proveOrdering(const Program& program, Placement placement, const SchemaTable& schemas,
                             const OrderingOptions& options) {
  return OrderingProver(options).prove(program, placement, schemas);
}

}  // namespace wb::proofs
