// proofs/smt.h: the Z3 plumbing every proof of wbcheck shares (DESIGN §11;
// verification-anchors §2, §7).
//
// A Solver wraps one z3::solver with what a proof needs and Z3 does not give by default:
// - limits that keep CI results from drifting: a deterministic resource budget per query
//   (`rlimit`, the same on every machine), a wall-clock guard (a watchdog thread that
//   interrupts the context, as Z3's own `timeout` would) and a memory guard (the same thread
//   interrupts the context when Z3's allocations, Z3_get_estimated_alloc_size, pass
//   `memoryMb`). Z3 honours interrupts softly and may overshoot them (z3 #3065, #6801); the
//   rlimit is the limit that decides, the clock and the memory guard only bound a runaway
//   query. Running out of any is an Unknown answer, never a pass. (Z3's own hard limit, the
//   global `memory_max_size`, is not used: in Z3 4.8.12 its out_of_memory_error escapes
//   Z3_solver_check and terminates the process);
// - fixed random seeds, so the same query gives the same answer and the same core;
// - tracked assertions with names: each is asserted as `literal => fact` and enabled per query
//   by assuming its literal, so a query says which facts it uses and an unsat answer comes
//   back as a core of names (minimised by default: `core.minimize`, no proper subset is a
//   core; a proof that can show its cores minimal more cheaply turns it off);
// - `--smt-dump DIR`: every query written as DIR/<label>-<n>.smt2, a file `z3 FILE` reads
//   and answers alone (the same options, assertions and assumptions), to bisect solver
//   versions (Alive2's --smt-bench).
// The interface is small on purpose: the ordering proof (proofs/ordering.h) and the
// equivalence proof build their encodings on it and nothing else.
#pragma once

#include <z3++.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wb::proofs {

// The answer of a proof (not of one query): what `wbcheck prove` and `validate` report.
enum class Verdict : std::uint8_t { Proved, Refuted, Unknown };
std::string_view toString(Verdict verdict);  // "proved", "refuted", "unknown"
// The exit code of DESIGN §12: 0 proved, 1 refuted, 3 unknown.
int exitCode(Verdict verdict);

struct SmtOptions {
  // Z3's resource units per query (deterministic). The ordering queries of a 10^5-node
  // program use a few thousand; 0 means no limit.
  std::uint64_t rlimit = 200'000'000;
  // Wall-clock guard per query, in milliseconds; 0 means none.
  std::uint32_t timeoutMs = 30'000;
  // Memory guard, in MB of Z3's allocations (all contexts of the process: Z3 counts them
  // together); 0 means none. The largest queries of a 3,000-node program take about 150 MB.
  // Also the bound the symbolic executors stop at while they build a query (proofs/symbolic.h).
  std::uint32_t memoryMb = 4096;
  unsigned randomSeed = 0;
  // Non-empty: every query is written to this directory (created if missing).
  std::string dumpDir;
  // The SMT-LIB logic the queries are in ("QF_IDL" for difference logic), or empty for Z3's
  // general solver. A logic's solver is set up in a fraction of the general one's time.
  std::string logic;
  // The SMT core alone (Z3_mk_simple_solver) instead of Z3's default solver, whose tactic
  // front end (ackermannisation, bit-blasting) costs the equivalence queries, uninterpreted
  // functions over 64-bit vectors, 40 times the core's own congruence closure.
  // Takes precedence over `logic`.
  bool coreSolver = false;
  // Unsat cores minimised by Z3 (`core.minimize`: a deletion pass of extra checks after each
  // unsat answer). Off, a core is Z3's conflict as found, which may hold more than it needs.
  bool minimizeCores = true;
  // Sat answers carry Z3's model (QueryResult::model). Building it costs about as much as a
  // small query; a proof that reads no model turns it off.
  bool models = true;
};

// One query's answer.
struct QueryResult {
  enum class Answer : std::uint8_t { Sat, Unsat, Unknown };
  Answer answer = Answer::Unknown;
  std::string reason;                // Unknown: "rlimit exhausted", "timeout", "memory limit", "z3 error: ..."
  std::vector<std::size_t> core;     // Unsat: the tracked assertions (ids) of the core, sorted
  std::optional<z3::model> model;    // Sat, when SmtOptions::models
  std::string dumpFile;              // where the query was written, if dumping
  std::uint64_t rlimitUsed = 0;      // resource units this query took
  double seconds = 0.0;

  bool sat() const { return answer == Answer::Sat; }
  bool unsat() const { return answer == Answer::Unsat; }
  bool unknown() const { return answer == Answer::Unknown; }
};

// Z3's allocations in this process, in MB (Z3_get_estimated_alloc_size).
double z3MemoryMb();

// A symbol Z3 and SMT-LIB print unquoted: letters, digits and `_ . %` kept, others `_`.
std::string smtSymbol(std::string_view text);

// One solver over a context the caller owns (terms are built in it). Not copyable; not for
// concurrent use (one per thread, each with its own context).
class Solver {
 public:
  // `label` names the dump files of this solver's queries.
  Solver(z3::context& context, const SmtOptions& options, std::string label);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  z3::context& context() const { return *context_; }

  // A fact every query assumes.
  void add(const z3::expr& fact);
  // A named fact that a query uses only when it enables it; returns its id (0, 1, ...).
  // Names need not be unique; the literal behind it is `t<id>` (`t<id>_<smtSymbol(name)>` in
  // dumped queries).
  std::size_t track(const z3::expr& fact, std::string name);
  std::size_t tracked() const { return names_.size(); }
  const std::string& name(std::size_t id) const { return names_[id]; }

  // Checks the facts plus the tracked assertions `enabled`. `what` describes the query in
  // its dump file ("is copy_ at 4 minimal?").
  QueryResult check(std::span<const std::size_t> enabled, std::string_view what = {});
  // The same with every tracked assertion enabled.
  QueryResult checkAll(std::string_view what = {});

  // Scopes: pop() removes every fact and tracked assertion added since the matching push()
  // (their ids are then free again). A query sees only what is in scope, so a proof that asks
  // many small questions keeps each in a scope of its own and pays for its own facts only.
  void push();
  void pop();

  // Queries made so far (every check counts, dumped or not).
  std::size_t queries() const { return queries_; }

 private:
  struct Watchdog;
  z3::context* context_;
  SmtOptions options_;
  std::string label_;
  z3::solver solver_;
  std::vector<std::string> names_;
  z3::expr_vector literals_;     // per tracked id in scope
  z3::expr_vector literalPool_;  // `t<i>`, made on first use (see literal())
  std::size_t queries_ = 0;
  std::uint64_t rlimitSeen_ = 0;
  std::vector<std::size_t> scopes_;  // tracked() at each open push()
  std::unique_ptr<Watchdog> watchdog_;

  z3::expr literal(std::size_t id, std::string_view name);
  std::string dump(const z3::expr_vector& assumptions, std::string_view what);
  std::uint64_t rlimitCount() const;
  void readAnswer(z3::check_result answer, int fired, QueryResult& result) const;
};

}  // namespace wb::proofs
