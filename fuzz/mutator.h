// fuzz/mutator.h: the structure-aware mutator of text_program_fuzzer (verification-anchors §6):
// parse the text, apply a few graph edits that keep the program valid, print it in form 1.
// Byte-level mutation only reaches the reader's error paths; these edits reach the placements
// and the oracle with programs no generator policy makes.
//
// Edits (each leaves a valid program or is discarded):
//   add-node       a new elementwise node (add, mul, neg, relu, clone) over values of one type
//   retarget       one argument of a node now names another earlier value of the same type
//   toggle-inplace aten::X.o <-> aten::X_.o when both schemas exist (relu <-> relu_)
//   add-view       alias / alias_copy / view / view_copy / detach of a value, with its type
//   drop-output    one returned value and its output spec
//   add-writeback  a value of a buffer's (or user input's) type becomes a mutation output
//   share-alloc    `# meta: _share_alloc_with_arg_idx=0` on a node whose first argument has
//                  its type
//   reduce         one step of the graph reducer (gen/reduce.h) on a random candidate: remove
//                  or bypass a node, truncate the tail, simplify an op, ...
// A program with more than kMutatorMaxBodyNodes body nodes gets reduce edits alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/ir.h"
#include "core/schema.h"

namespace wb::fuzz {

// The body nodes past which the mutator only shrinks: as for the generated-program targets
// (kFuzzMaxNodes), a small program is cheaper in every stage, and every known bug class
// shrinks to at most 6 body nodes. Seeds may be larger (the reader and the properties see them
// as they are); their mutants come down to this.
inline constexpr std::size_t kMutatorMaxBodyNodes = 12;

// Applies 1 to 3 edits chosen by `seed` to a valid program; nullopt when none applied.
std::optional<Program> mutateProgram(const Program& program, const SchemaTable& schemas, std::uint32_t seed);

// The whole custom-mutator step on text: read; if the text is a valid program, mutate it and
// print form 1; otherwise print a program generated from `seed` (a valid starting point).
// Never empty.
std::string mutateText(std::string_view text, std::uint32_t seed);

// The last text mutateText printed, with the program it printed. libFuzzer mutates an input up
// to -mutation_depth times in a row, each time the previous mutation's output: with the memo
// that text is not read and validated again. The program is the one read(text) gives (the
// writer round-trips, which text_model_fuzzer checks), so the output is the same with or
// without the memo.
struct MutationMemo {
  std::string text;
  std::optional<Program> program;
};
std::string mutateText(std::string_view text, std::uint32_t seed, MutationMemo& memo);

}  // namespace wb::fuzz
