// proofs/smt.cpp: the shared Z3 solver wrapper (see smt.h).
#include "proofs/smt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace wb::proofs {

std::string_view toString(Verdict verdict) {
  switch (verdict) {
    case Verdict::Proved: return "proved";
    case Verdict::Refuted: return "refuted";
    case Verdict::Unknown: return "unknown";
  }
  return "unknown";
}

int exitCode(Verdict verdict) {
  switch (verdict) {
    case Verdict::Proved: return 0;
    case Verdict::Refuted: return 1;
    case Verdict::Unknown: return 3;
  }
  return 3;
}

std::string smtSymbol(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  for (char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == '%';
    s += keep ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s.insert(s.begin(), '_');
  return s;
}

// The wall-clock and memory guard: one thread per solver, asleep until a query runs past its
// deadline, then it interrupts the context (Z3_interrupt: the query returns unknown,
// "canceled"). With a memory limit it also wakes every kMemoryPollMs while a query runs and
// interrupts the context when Z3's allocations pass the limit. Arming and disarming take the
// mutex only: the thread, once armed, sleeps until the deadline (or the next poll) it saw and
// then looks at the current one, so it is woken only when it sleeps unarmed (a query costs a
// lock, not a context switch).
struct Solver::Watchdog {
  static constexpr auto kMemoryPollMs = std::chrono::milliseconds(10);
  enum : int { kNone = 0, kClock = 1, kMemory = 2 };
  std::mutex mutex;
  std::condition_variable wake;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // set while a query runs
  bool idle = true;   // the thread waits without a deadline: arm() must wake it
  int fired = kNone;
  bool stop = false;
  std::thread thread;

  Watchdog(z3::context& context, std::uint32_t memoryMb) {
    thread = std::thread([this, &context, memoryMb] {
      std::unique_lock lock(mutex);
      while (!stop) {
        if (!deadline) {
          idle = true;
          wake.wait(lock);
          idle = false;
          continue;
        }
        const auto until = *deadline;
        if (memoryMb == 0) wake.wait_until(lock, until);
        else wake.wait_until(lock, std::min(until, std::chrono::steady_clock::now() + kMemoryPollMs));
        if (!deadline) continue;
        if (std::chrono::steady_clock::now() >= *deadline) {
          fired = kClock;
        } else if (memoryMb > 0 && z3MemoryMb() > memoryMb) {
          fired = kMemory;
        } else {
          continue;
        }
        deadline.reset();
        context.interrupt();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    wake.notify_one();
    thread.join();
  }
  void arm(std::chrono::milliseconds ms) {
    bool sleepsUnarmed = false;
    {
      std::lock_guard lock(mutex);
      deadline = std::chrono::steady_clock::now() + ms;
      fired = kNone;
      sleepsUnarmed = idle;
    }
    if (sleepsUnarmed) wake.notify_one();
  }
  int disarm() {
    std::lock_guard lock(mutex);
    deadline.reset();
    return fired;
  }
};

double z3MemoryMb() { return static_cast<double>(Z3_get_estimated_alloc_size()) / (1024.0 * 1024.0); }

Solver::Solver(z3::context& context, const SmtOptions& options, std::string label)
    : context_(&context),
      options_(options),
      label_(smtSymbol(label)),
      solver_(options.coreSolver      ? z3::solver(context, z3::solver::simple())
              : options.logic.empty() ? z3::solver(context)
                                      : z3::solver(context, options.logic.c_str())),
      literals_(context),
      literalPool_(context) {
  z3::params p(context);
  p.set("unsat_core", true);
  p.set("core.minimize", options.minimizeCores);
  p.set("random_seed", options.randomSeed);
  if (options.rlimit > 0) p.set("rlimit", static_cast<unsigned>(std::min<std::uint64_t>(options.rlimit, 0xffffffffu)));
  solver_.set(p);
  if (options.timeoutMs > 0 || options.memoryMb > 0) watchdog_ = std::make_unique<Watchdog>(context, options.memoryMb);
}

Solver::~Solver() = default;

void Solver::add(const z3::expr& fact) { solver_.add(fact); }

std::size_t Solver::track(const z3::expr& fact, std::string name) {
  const std::size_t id = names_.size();
  z3::expr l = literal(id, name);
  solver_.add(z3::implies(l, fact));
  literals_.push_back(l);
  names_.push_back(std::move(name));
  return id;
}

z3::expr Solver::literal(std::size_t id, std::string_view name) {
  // Dumped queries name their literals after their facts, so that `(get-unsat-core)` in z3
  // prints a core a reader understands. Otherwise the literal of id i is `t<i>`, made once per
  // solver and reused by every scope that frees id i again: a proof's literals then cost Z3 no
  // new symbols and no new terms (a fresh name per fact was a fifth of a small proof's time).
  if (!options_.dumpDir.empty()) return context_->bool_const(("t" + std::to_string(id) + "_" + smtSymbol(name)).c_str());
  while (literalPool_.size() <= id)
    literalPool_.push_back(context_->bool_const(("t" + std::to_string(literalPool_.size())).c_str()));
  return literalPool_[static_cast<int>(id)];
}

void Solver::push() {
  solver_.push();
  scopes_.push_back(names_.size());
}

void Solver::pop() {
  if (scopes_.empty()) return;
  solver_.pop();
  const std::size_t keep = scopes_.back();
  scopes_.pop_back();
  names_.resize(keep);
  z3::expr_vector kept(*context_);
  for (std::size_t i = 0; i < keep; ++i) kept.push_back(literals_[static_cast<int>(i)]);
  literals_ = kept;
}

std::uint64_t Solver::rlimitCount() const {
  const z3::stats stats = solver_.statistics();
  for (unsigned i = 0; i < stats.size(); ++i)
    if (stats.key(i) == "rlimit count") return stats.is_uint(i) ? stats.uint_value(i) : static_cast<std::uint64_t>(stats.double_value(i));
  return 0;
}

namespace {
void appendAnswer(const std::string& file, const QueryResult& result);
}  // namespace

std::string Solver::dump(const z3::expr_vector& assumptions, std::string_view what) {
  std::error_code ec;
  std::filesystem::create_directories(options_.dumpDir, ec);
  char seq[16];
  std::snprintf(seq, sizeof seq, "%05zu", queries_);
  const std::filesystem::path file = std::filesystem::path(options_.dumpDir) / (label_ + "-" + seq + ".smt2");
  std::ofstream out(file);
  out << "; wbcheck query " << queries_ << " of solver " << label_ << "\n";
  if (!what.empty()) {
    out << "; ";
    for (char c : what) out << (c == '\n' ? ' ' : c);
    out << "\n";
  }
  out << "; unsat: the answer literals printed by get-unsat-core name the facts that conflict\n";
  out << "(set-option :produce-unsat-cores true)\n";
  if (!options_.logic.empty()) out << "(set-logic " << options_.logic << ")\n";
  out << "(set-option :smt.core.minimize " << (options_.minimizeCores ? "true" : "false") << ")\n";
  out << "(set-option :smt.random_seed " << options_.randomSeed << ")\n";
  out << "(set-option :sat.random_seed " << options_.randomSeed << ")\n";
  if (options_.rlimit > 0) out << "(set-option :rlimit " << options_.rlimit << ")\n";
  out << Z3_solver_to_string(*context_, solver_);
  out << "(check-sat-assuming (";
  for (unsigned i = 0; i < assumptions.size(); ++i) out << (i ? " " : "") << assumptions[i];
  out << "))\n";
  return out ? file.string() : std::string();
}

namespace {
// After the query: the answer wbcheck's Z3 gave, and for unsat the command that prints the core.
void appendAnswer(const std::string& file, const QueryResult& result) {
  std::ofstream out(file, std::ios::app);
  switch (result.answer) {
    case QueryResult::Answer::Sat: out << "; answered sat\n"; break;
    case QueryResult::Answer::Unsat: out << "; answered unsat\n(get-unsat-core)\n"; break;
    case QueryResult::Answer::Unknown: out << "; answered unknown: " << result.reason << "\n"; break;
  }
}
}  // namespace

QueryResult Solver::check(std::span<const std::size_t> enabled, std::string_view what) {
  QueryResult result;
  z3::expr_vector assumptions(*context_);
  for (std::size_t id : enabled) assumptions.push_back(literals_[static_cast<int>(id)]);
  if (!options_.dumpDir.empty()) result.dumpFile = dump(assumptions, what);
  ++queries_;
  const auto start = std::chrono::steady_clock::now();
  // No clock: a deadline far enough away to be none (the memory guard still polls).
  if (watchdog_) watchdog_->arm(std::chrono::milliseconds(options_.timeoutMs > 0 ? options_.timeoutMs : 1u << 31));
  z3::check_result answer = z3::unknown;
  std::string error;
  if (options_.memoryMb > 0 && z3MemoryMb() > options_.memoryMb) {
    error = "memory";  // the terms of the query alone pass the limit
  } else {
    try {
      answer = solver_.check(assumptions);
    } catch (const z3::exception& e) {
      error = e.msg();
    }
  }
  const int fired = watchdog_ ? watchdog_->disarm() : Watchdog::kNone;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::uint64_t count = rlimitCount();
  result.rlimitUsed = count >= rlimitSeen_ ? count - rlimitSeen_ : count;
  rlimitSeen_ = count;
  if (error == "memory") {
    result.answer = QueryResult::Answer::Unknown;
    result.reason = "memory limit (" + std::to_string(options_.memoryMb) + " MB) reached before the query";
  } else if (!error.empty()) {
    result.answer = QueryResult::Answer::Unknown;
    result.reason = "z3 error: " + error;
  } else {
    readAnswer(answer, fired, result);
  }
  if (!result.dumpFile.empty()) appendAnswer(result.dumpFile, result);
  return result;
}

void Solver::readAnswer(z3::check_result answer, int fired, QueryResult& result) const {
  switch (answer) {
    case z3::sat:
      result.answer = QueryResult::Answer::Sat;
      if (options_.models) result.model = solver_.get_model();
      break;
    case z3::unsat: {
      result.answer = QueryResult::Answer::Unsat;
      const z3::expr_vector core = solver_.unsat_core();
      for (unsigned i = 0; i < core.size(); ++i) {
        // The literal's name starts with t<id>_.
        const std::string name = core[i].decl().name().str();
        result.core.push_back(static_cast<std::size_t>(std::stoull(name.substr(1, name.find('_') - 1))));
      }
      std::sort(result.core.begin(), result.core.end());
      break;
    }
    case z3::unknown: {
      result.answer = QueryResult::Answer::Unknown;
      // Z3 says "canceled" both when the rlimit runs out and when the context is interrupted;
      // the watchdog (the only clock and memory guard: Z3's own `timeout` is not set) knows
      // whether it did.
      const std::string why = solver_.reason_unknown();
      if (fired == Watchdog::kMemory)
        result.reason = "memory limit (" + std::to_string(options_.memoryMb) + " MB)";
      else if (fired == Watchdog::kClock || why == "timeout")
        result.reason = "timeout (" + std::to_string(options_.timeoutMs) + " ms)";
      else if (why.find("resource limit") != std::string::npos || (why == "canceled" && options_.rlimit > 0))
        result.reason = "rlimit exhausted (" + std::to_string(options_.rlimit) + ")";
      else
        result.reason = why.empty() ? std::string("unknown") : why;
      break;
    }
  }
}

QueryResult Solver::checkAll(std::string_view what) {
  std::vector<std::size_t> all(names_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return check(all, what);
}

}  // namespace wb::proofs
