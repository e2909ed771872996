// fuzz/fuzz_checks.h: the properties the fuzz targets check (DESIGN §10), shared by the
// libFuzzer targets, their replay drivers and the crash reducer.
//
// Each target checks one group of properties, so that one execution stays cheap enough for
// coverage guidance to work under ASan+UBSan (fuzz/README.md has the figures):
//   program_fuzzer         generated programs: the oracle (early == S_par)
//   placement_fuzzer       generated programs: early and end
//   memplan_fuzzer         generated programs: the memory plans of early and end
//   model_fuzzer           generated programs: the models of real code (upstream,
//                          pr20744@..., draft13857) place without throwing
//   round_trip_fuzzer      generated programs: round trip
//   text_fuzzer            the reader alone, on any bytes
//   text_program_fuzzer    programs the reader accepts: the oracle (when small)
//   text_placement_fuzzer  programs the reader accepts: early and end
//   text_memplan_fuzzer    programs the reader accepts: the memory plans of early and end
//   text_model_fuzzer      programs the reader accepts: the models of real code; round trip
//
// Checks return a Finding instead of aborting so that the reducer (replay driver `--shrink`)
// can ask "does this smaller program still fail the same way?"; the targets turn a Finding into
// an abort with a readable message (die()), which libFuzzer records as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/ir.h"
#include "core/schema.h"
#include "gen/generator.h"

namespace wb::fuzz {

// The body nodes of the programs the generator-driven targets build (program_fuzzer,
// placement_fuzzer, memplan_fuzzer, model_fuzzer, round_trip_fuzzer; gen::GenOptions::maxNodes,
// 24 by default elsewhere): a small program is cheaper in every stage, and every known bug class of upstream,
// of each version of PR #20744 and of the seeded mutants shrinks to at most 6 body nodes
// (corpus/regressions, bench/README.md). Larger programs come from the targets over text and
// `wbcheck fuzz`.
inline constexpr int kFuzzMaxNodes = 8;

// A property that does not hold. `property` is a short stable key (the reducer preserves it);
// `details` says what was seen, in words.
struct Finding {
  std::string property;  // "early != S_par", "round trip", "early peak > end peak", ...
  std::string details;
};

// What the targets need, built once per process: parsing the built-in schema table costs far
// more than one fuzz input. Immutable after construction.
struct Context {
  SchemaTable builtins;
  // The generator-driven targets' and the text mutator's, for an input that is no program (at
  // most kFuzzMaxNodes body nodes).
  gen::Generator generator;
  // builtins plus the schemas of the ops the oracle interprets (oracle::withOracleSchemas); a
  // program's table is this plus its own `Schemas:` lines, which win.
  SchemaTable oracleBuiltins;
};
const Context& context();

// Which properties a check covers.
struct CheckScope {
  // readProgram(writeProgram(p)) == p.
  bool roundTrip = true;
  // `early` and `end` place without throwing; `early` does not fail; both yield valid programs,
  // and placing early's again changes nothing.
  bool placements = true;
  // `early` and `end` place without throwing and `early` does not fail; the memory plans of
  // `end` and `early` build, and early's peak <= end's peak plus the bytes of the clones early
  // inserts to break copy cycles (end makes none, and is wrong there).
  bool memoryPlans = true;
  // Every model of real code (isModelOfRealCode: upstream, every pr20744@..., draft13857)
  // places without throwing. Their wrong or invalid results are their documented bugs, so only
  // crash-freedom is asked of them.
  bool models = true;
  // The oracle finds no `early != S_par` and `early` does not fail under it (a program it
  // cannot interpret is skipped, not a finding; findings about the program are not looked
  // for). Off for programs too large to interpret within libFuzzer's per-input budget.
  bool oracle = true;
  // Input sets per oracle check; each runs S_par and the placed program in both view modes.
  int oracleInputs = 2;
  std::uint64_t seed = 0;
};

// The property group of each target over programs, by name (generated_fuzzer.cpp and
// read_fuzzer.cpp are built once per target with it): text_X checks X's group over programs read
// from text, and text_model_fuzzer round_trip_fuzzer's too.
// Another name checks nothing.
constexpr CheckScope propertyGroup(std::string_view target) {
  CheckScope scope;
  scope.roundTrip = target == "round_trip_fuzzer" || target == "text_model_fuzzer";
  scope.placements = target == "placement_fuzzer" || target == "text_placement_fuzzer";
  scope.memoryPlans = target == "memplan_fuzzer" || target == "text_memplan_fuzzer";
  scope.models = target == "model_fuzzer" || target == "text_model_fuzzer";
  scope.oracle = target == "program_fuzzer" || target == "text_program_fuzzer";
  return scope;
}
constexpr bool checksSomething(const CheckScope& scope) {
  return scope.roundTrip || scope.placements || scope.memoryPlans || scope.models || scope.oracle;
}

// The properties of `scope` on a valid program (validate() holds).
std::optional<Finding> checkProgram(const Program& program, const CheckScope& scope);

// Generated programs (program_fuzzer, placement_fuzzer, memplan_fuzzer, model_fuzzer,
// round_trip_fuzzer): bytes -> ByteChoices -> generator.
gen::Generated generateFromBytes(std::span<const std::uint8_t> bytes);
// The oracle seed of a byte input: its first bytes, so that a corpus entry replays exactly.
std::uint64_t seedOfBytes(std::span<const std::uint8_t> bytes);
// The generator must produce a valid program (`invalid generated program`); then
// checkProgram(scope).
std::optional<Finding> checkGeneratedBytes(std::span<const std::uint8_t> bytes, const CheckScope& scope);
// The body of a generator-driven LLVMFuzzerTestOneInput: an input longer than the generator
// ever reads only repeats a shorter one's program, so it is refused (-1: libFuzzer keeps it out
// of the corpus); otherwise checkGeneratedBytes, and a finding dies with its program.
int testGeneratedBytes(std::span<const std::uint8_t> bytes, const CheckScope& scope);

// The reader on arbitrary text (text_fuzzer): it must not crash, hang or recurse without
// bound; a rejection must carry a diagnostic with a line (`unpositioned diagnostic`); on an
// accepted program validate() and the parsing of its own schemas must not throw.
std::optional<Finding> checkReader(std::string_view text);

// The targets over text programs (text_program_fuzzer, text_placement_fuzzer,
// text_memplan_fuzzer, text_model_fuzzer; every group by default, as fuzz_mutator_selftest
// asks): checkReader, then the properties of `groups` on a program the reader accepts that validates (and whose own
// schemas parse), with the oracle only when textProgramIsSmall.
std::optional<Finding> checkText(std::string_view text, const CheckScope& groups = {});
// The scope checkText uses for a program: `groups`, without the oracle when the program is
// not small.
CheckScope textScope(const Program& program, const CheckScope& groups = {});

// The program a text input denotes when the reader accepts it and it validates.
std::optional<Program> validProgramFromText(std::string_view text);

// True when a program is small enough for the oracle within libFuzzer's per-input budget:
// few nodes and few elements over all annotated tensor types.
bool textProgramIsSmall(const Program& program);

// The reducer behind the replay driver's `--shrink`: the smallest program (gen/reduce.h steps,
// to a fixpoint) on which checkProgram(scope) reports a finding with the same property.
// nullopt when `program` has no finding.
struct Shrunk {
  Program program;
  Finding finding;     // the finding on the reduced program
  std::size_t tests = 0;
  bool fixpoint = false;
};
std::optional<Shrunk> shrink(const Program& program, const CheckScope& scope);

// Prints the finding (and the program in form 1, when given) to stderr and aborts: libFuzzer
// then saves the input as a crash, and a replay run fails under ctest.
[[noreturn]] void die(const Finding& finding, const Program* program = nullptr);

}  // namespace wb::fuzz
