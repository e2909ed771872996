// fuzz/fuzz_checks.cpp: the properties of fuzz/fuzz_checks.h.
//
// Every library call is wrapped so that an exception becomes a Finding naming the stage: a
// fuzz target must never let one escape (libFuzzer would report a bare "uncaught exception"),
// and the reducer needs the stage to preserve.
#include "fuzz/fuzz_checks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "core/memplan.h"
#include "core/placement.h"
#include "core/shape_rules.h"
#include "core/text.h"
#include "core/validate.h"
#include "gen/choices.h"
#include "gen/reduce.h"
#include "oracle/oracle.h"

namespace wb::fuzz {

namespace {

// Bounds of textProgramIsSmall: generated programs stay far below them (kFuzzMaxNodes body nodes, 24
// elements per tensor), text inputs may declare anything up to ReadLimits.
constexpr std::size_t kSmallNodes = 96;
constexpr std::int64_t kSmallElements = 1 << 14;

Finding exceptionFinding(std::string_view stage, std::string_view what) {
  return {"exception", std::string(stage) + " threw: " + std::string(what)};
}

// Runs `f` (returning std::optional<Finding>) and turns an escaping exception into a Finding.
template <typename F>
std::optional<Finding> guarded(std::string_view stage, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return exceptionFinding(stage, e.what());
  } catch (...) {
    return exceptionFinding(stage, "a non-standard exception");
  }
}

// `readFrom`: the text `program` was read from, when it was. The reader is a function of its
// text, so when the program prints as that very text, read(write(p)) is read(text), which is p:
// the second read would only repeat the first.
std::optional<Finding> checkRoundTrip(const Program& program, std::optional<std::string_view> readFrom) {
  const std::string text = writeProgram(program);
  if (readFrom && text == *readFrom) return std::nullopt;
  Result<Program> back = readProgram(text, "<written>");
  if (!back.ok()) return Finding{"round trip", "the writer's output does not read back:\n" + formatAll(back.errors)};
  if (!(*back == program)) return Finding{"round trip", "read(write(p)) != p; written text:\n" + text};
  return std::nullopt;
}

std::string joinDiagnostics(const std::vector<Diagnostic>& diagnostics) { return formatAll(diagnostics); }

// Places with `early` and `end`; returns their results through the out-parameters. With
// `judgeResults` (CheckScope::placements) the placed programs must also be valid and early's
// idempotent; without (the memory plans alone) only placing without throwing and early's
// success are asked, which the plans need.
std::optional<Finding> checkOurPlacements(const Program& program, const SchemaTable& schemas, PlacedProgram& early,
                                          PlacedProgram& end, bool judgeResults) {
  for (Placement placement : {Placement::Early, Placement::End}) {
    const std::string name(toString(placement));
    std::optional<Finding> f = guarded("place(" + name + ")", [&]() -> std::optional<Finding> {
      PlacedProgram placed = place(program, placement, schemas);
      if (placement == Placement::Early && placed.failure)
        return Finding{"early failed", "place(early) failed: " + *placed.failure};
      if (judgeResults && !placed.failure) {
        std::vector<Diagnostic> invalid = validate(placed.program);
        if (!invalid.empty())
          return Finding{"invalid placed program", name + " produced an invalid program:\n" + joinDiagnostics(invalid)};
      }
      (placement == Placement::Early ? early : end) = std::move(placed);
      return std::nullopt;
    });
    if (f) return f;
  }
  if (!judgeResults) return std::nullopt;
  // A placed program's copies are in-place lineages of their targets: placing again is a no-op.
  return guarded("place(early) again", [&]() -> std::optional<Finding> {
    PlacedProgram again = place(early.program, Placement::Early, schemasFor(early.program, context().builtins));
    if (again.failure) return Finding{"early failed", "placing early's own result failed: " + *again.failure};
    if (!(again.program == early.program))
      return Finding{"early not idempotent", "placing early's result again changed it:\n" + writeProgram(again.program)};
    return std::nullopt;
  });
}

// The models of real code must place without throwing. Their wrong or invalid results are
// their documented bugs (upstream renames output specs by position after reordering the copies
// first: B2), so nothing else is asked of them.
std::optional<Finding> checkModels(const Program& program, const SchemaTable& schemas) {
  for (Placement placement : allPlacements()) {
    if (!isModelOfRealCode(placement)) continue;
    std::optional<Finding> f = guarded("place(" + std::string(toString(placement)) + ")", [&]() -> std::optional<Finding> {
      (void)place(program, placement, schemas);
      return std::nullopt;
    });
    if (f) return f;
  }
  return std::nullopt;
}

std::optional<Finding> checkMemoryPlans(const Program& input, const PlacedProgram& early, const PlacedProgram& end,
                                        const SchemaTable& schemas) {
  return guarded("planMemory", [&]() -> std::optional<Finding> {
    MemoryPlan endPlan = planMemory(end.program, schemas);
    MemoryPlan earlyPlan = planMemory(early.program, schemas);
    // Shortening lifetimes never raises the peak (DESIGN §8), but a clone that early inserts to
    // break a copy cycle is a new allocation that end does not make (end is wrong on such
    // programs: S_seq != S_par). So early may exceed end by its clones' bytes, no more.
    const std::int64_t slack = insertedCloneBytes(input, early.program);
    if (earlyPlan.peakLiveBytes > endPlan.peakLiveBytes + slack)
      return Finding{"early peak > end peak", "peak live bytes: early " + std::to_string(earlyPlan.peakLiveBytes) +
                                                  " (at index " + std::to_string(earlyPlan.peakIndex) + "), end " +
                                                  std::to_string(endPlan.peakLiveBytes) + " (at index " +
                                                  std::to_string(endPlan.peakIndex) + "), clones " +
                                                  std::to_string(slack) + " bytes"};
    return std::nullopt;
  });
}

// `validated` is set when the oracle judged the program: oracle::check validates it before
// anything else, and an invalid program is its Verdict::Error.
std::optional<Finding> checkOracle(const Program& program, const SchemaTable& schemas, const CheckScope& scope,
                                   bool* validated) {
  return guarded("oracle::check", [&]() -> std::optional<Finding> {
    oracle::CheckOptions options;
    options.placement = Placement::Early;
    options.inputs = scope.oracleInputs;
    options.seed = scope.seed;
    options.fileName = "FILE";
    // Findings about the program (S_seq != S_par, S_par != F) are expected, not bugs of early:
    // F is neither compiled nor run.
    options.programFindings = false;
    // A fresh check for every input (not an oracle::Checker kept between inputs, which would
    // save a fifth of it): libFuzzer re-runs an input and scans the heap for leaks after every
    // run that frees fewer blocks than it allocates, and a Checker frees one check's blocks
    // in the next.
    oracle::CheckReport report = oracle::check(program, options, schemas);
    if (validated != nullptr) *validated = report.verdict != oracle::Verdict::Error;
    if (report.placementFailure)
      return Finding{"early failed", "the oracle's placement failed: " + *report.placementFailure};
    if (report.verdict == oracle::Verdict::PlacementBug) return Finding{"early != S_par", oracle::formatReport(report)};
    // Verdict::Error: not interpretable (unknown shapes and no storage-tier fallback, memory
    // cap): skipped.
    return std::nullopt;
  });
}

bool ownSchemasParse(const Program& program) {
  for (const std::string& line : program.schemas)
    if (!parseSchema(line, "Schemas").ok()) return false;
  return true;
}

// The oracle's group alone (program_fuzzer, text_program_fuzzer).
bool oracleAlone(const CheckScope& scope) {
  return scope.oracle && !scope.roundTrip && !scope.placements && !scope.memoryPlans && !scope.models;
}

gen::GenOptions fuzzGenOptions() {
  gen::GenOptions options;
  options.maxNodes = kFuzzMaxNodes;
  return options;
}

}  // namespace

const Context& context() {
  // The one process-wide object: libFuzzer's C interface gives a target no other place to keep
  // state between inputs. Immutable once built.
  static const Context ctx{builtinSchemas(), gen::Generator(fuzzGenOptions(), builtinSchemas()),
                           oracle::withOracleSchemas(builtinSchemas())};
  return ctx;
}

namespace {

// checkProgram; `oracleValidated` as checkOracle's `validated`, `readFrom` as checkRoundTrip's.
std::optional<Finding> checkProgram(const Program& program, const CheckScope& scope, bool* oracleValidated,
                                    std::optional<std::string_view> readFrom = std::nullopt) {
  if (scope.roundTrip)
    if (std::optional<Finding> f = guarded("round trip", [&] { return checkRoundTrip(program, readFrom); })) return f;
  if (!scope.placements && !scope.memoryPlans && !scope.models && !scope.oracle) return std::nullopt;
  SchemaTable schemas;
  if (std::optional<Finding> f = guarded("schemasFor", [&]() -> std::optional<Finding> {
        schemas = schemasFor(program, context().oracleBuiltins);
        return std::nullopt;
      }))
    return f;
  if (scope.placements || scope.memoryPlans) {
    PlacedProgram early, end;
    if (std::optional<Finding> f = checkOurPlacements(program, schemas, early, end, scope.placements)) return f;
    if (scope.memoryPlans)
      if (std::optional<Finding> f = checkMemoryPlans(program, early, end, schemas)) return f;
  }
  if (scope.models)
    if (std::optional<Finding> f = checkModels(program, schemas)) return f;
  if (scope.oracle)
    if (std::optional<Finding> f = checkOracle(program, schemas, scope, oracleValidated)) return f;
  return std::nullopt;
}

}  // namespace

std::optional<Finding> checkProgram(const Program& program, const CheckScope& scope) {
  return checkProgram(program, scope, nullptr);
}

gen::Generated generateFromBytes(std::span<const std::uint8_t> bytes) {
  gen::ByteChoices choices(bytes);
  return context().generator.generate(choices);
}

std::uint64_t seedOfBytes(std::span<const std::uint8_t> bytes) {
  std::uint64_t seed = 0;
  for (std::uint8_t b : bytes.first(std::min<std::size_t>(bytes.size(), 8))) seed = seed * 131 + b;
  return seed;
}

std::optional<Finding> checkGeneratedBytes(std::span<const std::uint8_t> bytes, const CheckScope& scope) {
  gen::Generated generated;
  if (std::optional<Finding> f = guarded("generate", [&]() -> std::optional<Finding> {
        generated = generateFromBytes(bytes);
        return std::nullopt;
      }))
    return f;
  auto invalidProgram = [&]() -> std::optional<Finding> {
    std::vector<Diagnostic> invalid = validate(generated.program);
    if (invalid.empty()) return std::nullopt;
    return Finding{"invalid generated program", "the generator produced an invalid program:\n" + formatAll(invalid)};
  };
  if (oracleAlone(scope)) {
    // The oracle alone (program_fuzzer): oracle::check validates the program before anything
    // else, so the program is validated there, once per input. Only when the oracle did not
    // judge it (an invalid program is its Verdict::Error; an exception) is validate() run here,
    // and an invalid program is then the finding, as it is when validated first.
    bool validated = false;
    std::optional<Finding> f = checkProgram(generated.program, scope, &validated);
    if (!validated)
      if (std::optional<Finding> invalid = invalidProgram()) return invalid;
    return f;
  }
  if (std::optional<Finding> invalid = invalidProgram()) return invalid;
  return checkProgram(generated.program, scope);
}

int testGeneratedBytes(std::span<const std::uint8_t> bytes, const CheckScope& scope) {
  // The generator consumes a few hundred bytes at most.
  constexpr std::size_t kMaxGeneratorBytes = 4096;
  if (bytes.size() > kMaxGeneratorBytes) return -1;
  if (std::optional<Finding> f = checkGeneratedBytes(bytes, scope)) {
    const gen::Generated generated = generateFromBytes(bytes);
    die(*f, &generated.program);
  }
  return 0;
}

bool textProgramIsSmall(const Program& program) {
  if (program.graph.nodes.size() > kSmallNodes) return false;
  std::int64_t elements = 0;
  for (const Node& node : program.graph.nodes) {
    std::optional<std::int64_t> n;
    // Most annotations are static shapes, read here without building a TensorType (an
    // allocation each). One that also names no dtype only counts towards the budget.
    if (std::optional<StaticShape> shape = parseStaticShape(node.typeText)) {
      n = shape->numel();
    } else if (std::optional<TensorType> type = node.tensorType()) {
      n = type->numel();
    } else {
      continue;
    }
    if (!n || *n > kSmallElements) return false;
    elements += *n;
    if (elements > kSmallElements) return false;
  }
  return true;
}

std::optional<Program> validProgramFromText(std::string_view text) {
  Result<Program> read = readProgram(text, "<fuzz>");
  if (!read.ok() || !validate(*read).empty() || !ownSchemasParse(*read)) return std::nullopt;
  return std::move(*read.value);
}

namespace {

// The reader on `text`: it must not throw, and a rejection must carry a positioned diagnostic.
// `read` gets the program when the reader accepts it.
std::optional<Finding> checkRead(std::string_view text, Result<Program>& read) {
  if (std::optional<Finding> f = guarded("readProgram", [&]() -> std::optional<Finding> {
        read = readProgram(text, "<fuzz>");
        return std::nullopt;
      }))
    return f;
  if (!read.ok()) {
    // Users see `file:line:col: message`; a rejection without a position cannot be acted on.
    bool positioned = false;
    for (const Diagnostic& d : read.errors) positioned = positioned || d.line > 0;
    if (!positioned)
      return Finding{"unpositioned diagnostic",
                     read.errors.empty() ? "rejected with no diagnostic" : "no diagnostic has a line:\n" + formatAll(read.errors)};
  }
  return std::nullopt;
}

// validate() and the parsing of the program's own schemas must not throw; `valid` says whether
// the program passes both (every consumer rejects anything else, cli/common.cpp, so nothing
// downstream is asked of it).
std::optional<Finding> checkValidating(const Program& program, bool& valid) {
  return guarded("validate", [&]() -> std::optional<Finding> {
    valid = validate(program).empty() && ownSchemasParse(program);
    return std::nullopt;
  });
}

// The reader's properties on `text`; `accepted` gets the program when the reader accepts it,
// it validates and its own schemas parse.
std::optional<Finding> checkReading(std::string_view text, std::optional<Program>& accepted) {
  Result<Program> read;
  if (std::optional<Finding> f = checkRead(text, read)) return f;
  if (!read.ok()) return std::nullopt;
  bool valid = false;
  if (std::optional<Finding> f = checkValidating(*read, valid)) return f;
  if (valid) accepted = std::move(*read.value);
  return std::nullopt;
}

}  // namespace

std::optional<Finding> checkReader(std::string_view text) {
  std::optional<Program> accepted;
  return checkReading(text, accepted);
}

CheckScope textScope(const Program& program, const CheckScope& groups) {
  CheckScope scope = groups;
  scope.oracle = groups.oracle && textProgramIsSmall(program);
  return scope;
}

std::optional<Finding> checkText(std::string_view text, const CheckScope& groups) {
  if (!oracleAlone(groups)) {
    std::optional<Program> accepted;
    if (std::optional<Finding> f = checkReading(text, accepted)) return f;
    if (!accepted) return std::nullopt;
    return checkProgram(*accepted, textScope(*accepted, groups), nullptr, text);
  }
  // The oracle alone (text_program_fuzzer): oracle::check validates the program before anything
  // else, so a small program is validated there, once per input, as checkGeneratedBytes does.
  // Only when the oracle did not judge it (invalid: its Verdict::Error; an exception; a program
  // too large to interpret) is validate() run here, which then decides as checkReading does.
  Result<Program> read;
  if (std::optional<Finding> f = checkRead(text, read)) return f;
  if (!read.ok()) return std::nullopt;
  bool schemasParse = false;
  if (std::optional<Finding> f = guarded("validate", [&]() -> std::optional<Finding> {
        schemasParse = ownSchemasParse(*read);
        return std::nullopt;
      }))
    return f;
  bool valid = false;
  if (!schemasParse) return checkValidating(*read, valid);  // not accepted; validate() must not throw
  const CheckScope scope = textScope(*read, groups);
  bool validated = false;
  std::optional<Finding> f;
  if (scope.oracle) f = checkProgram(*read, scope, &validated);
  if (validated) return f;
  if (std::optional<Finding> invalid = checkValidating(*read, valid)) return invalid;
  return valid ? f : std::nullopt;
}

std::optional<Shrunk> shrink(const Program& program, const CheckScope& scope) {
  std::optional<Finding> original = checkProgram(program, scope);
  if (!original) return std::nullopt;
  const std::string property = original->property;
  gen::ReduceOptions options;
  options.maxTests = 20'000;  // each test is a full check; a fixpoint is usually far sooner
  gen::ReduceResult reduced = gen::reduce(
      program,
      [&](const Program& candidate) {
        std::optional<Finding> f = checkProgram(candidate, scope);
        return f && f->property == property;
      },
      options);
  Shrunk result{reduced.program, *original, reduced.tests, reduced.fixpoint};
  if (std::optional<Finding> f = checkProgram(result.program, scope)) result.finding = *f;
  return result;
}

void die(const Finding& finding, const Program* program) {
  std::fprintf(stderr, "\n==== wbcheck fuzz: property violated: %s ====\n%s\n", finding.property.c_str(),
               finding.details.c_str());
  if (program != nullptr) {
    // Printing may itself be what is broken; the finding above is already out.
    std::string text = writeProgram(*program);
    std::fprintf(stderr, "---- program (form 1) ----\n%s---- end ----\n", text.c_str());
  }
  std::fflush(stderr);
  std::abort();
}

}  // namespace wb::fuzz
