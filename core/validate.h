// core/validate.h: structural validity of a Program (DESIGN §2).
//
// Every consumer validates first; nothing downstream of validate() ever sees an invalid
// program, so analyses may index without re-checking. Beyond the structure, validate() checks
// the annotated shapes against the shape rules of the ops it knows (core/shape_rules.h): a
// node whose annotation contradicts its op (a stale shape) is an error, at the node's line
// when the program came from text.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir.h"

namespace wb {

// Reports every structural error (not just the first): duplicate or empty names, references
// to undefined nodes or uses before definition, placeholders not first, no output node or not
// last or more than one, signature input specs not matching the placeholders one to one,
// output specs not matching the returned values in number, mutation targets that do not
// resolve, nodes with op kinds that cannot carry the given fields; and, in a graph without
// those, annotated shapes that contradict their op's shape rule.
std::vector<Diagnostic> validate(const Program& program);

// Bounds on what validate() accepts and reports (the defaults match ReadLimits in core/text.h).
struct ValidateLimits {
  std::size_t maxListLength = 100'000;  // items in one list or tuple argument
  std::size_t maxNesting = 64;          // lists inside lists inside one argument
  std::size_t maxErrors = 1000;         // further errors are counted in one final diagnostic
};

// The same checks with explicit limits; validate(program) uses the defaults. Both also check
// the graphs of the submodules (names, uses, placeholders first, one output node last).
std::vector<Diagnostic> validate(const Program& program, const ValidateLimits& limits);

// The same, with the place in its text where each node of the main graph was defined (in graph
// order; readProgram records them): an error about such a node gets its line and column (the
// caller fills in the file name and the line's text). Errors about the program as a whole, the
// signature and the submodules keep line 0.
std::vector<Diagnostic> validate(const Program& program, const ValidateLimits& limits,
                                 std::span<const SourceLocation> nodeLocations);

}  // namespace wb
