// fuzz/fuzz_checks.h: the properties every fuzz target checks (DESIGN §10), shared by the
// libFuzzer targets, their replay drivers and the crash reducer.
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

// A property that does not hold. `property` is a short stable key (the reducer preserves it);
// `details` says what was seen, in words.
struct Finding {
  std::string property;  // "early != S_par", "round trip", "early peak > end peak", ...
  std::string details;
};

// What both targets need, built once per process: parsing the built-in schema table costs far
// more than one fuzz input. Immutable after construction.
struct Context {
  SchemaTable builtins;
  gen::Generator generator;
  // builtins plus the schemas of the ops the oracle interprets (oracle::withOracleSchemas); a
  // program's table is this plus its own `Schemas:` lines, which win.
  SchemaTable oracleBuiltins;
};
const Context& context();

// How much of the checking a program gets.
struct CheckScope {
  // The oracle (early against S_par): off for programs too large to interpret within the
  // per-input budget libFuzzer wants (see textProgramIsSmall).
  bool oracle = true;
  // Input sets per oracle check: each one runs S_par, S_seq, F and the placed program in both
  // view modes, so this is the main cost knob.
  int oracleInputs = 2;
  std::uint64_t seed = 0;
};

// Every property of a valid program (validate() holds):
//   - readProgram(writeProgram(p)) == p;
//   - every placement places without throwing; `early` does not fail; `early` and `end` yield
//     valid programs, and placing early's again changes nothing (the models' wrong or invalid
//     results are their documented bugs, so only crash-freedom is asked of them);
//   - the memory plans of `end` and `early` build, and early's peak <= end's peak plus the
//     bytes of the clones early inserts to break copy cycles (end makes none, and is wrong
//     there);
//   - when scope.oracle: the oracle finds no `early != S_par` (a program it cannot interpret
//     is skipped, not a finding).
std::optional<Finding> checkProgram(const Program& program, const CheckScope& scope);

// program_fuzzer: bytes -> ByteChoices -> generator -> program (always valid by construction).
gen::Generated generateFromBytes(std::span<const std::uint8_t> bytes);
// The scope program_fuzzer checks with: the first bytes also seed the oracle's inputs, so a
// corpus entry replays exactly.
CheckScope programScope(std::span<const std::uint8_t> bytes);
// The generator must produce a valid program; then checkProgram with the full scope.
std::optional<Finding> checkGeneratedBytes(std::span<const std::uint8_t> bytes);

// text_fuzzer: the reader on arbitrary text. A rejected input must carry at least one
// diagnostic with a line number; an accepted one that validates (and whose own schemas parse)
// goes through checkProgram, with the oracle only for small programs.
std::optional<Finding> checkText(std::string_view text);

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
