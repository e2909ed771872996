// core/placement.h: the write-back pass (DESIGN §6).
//
// A placement turns each mutation output whose value is not an in-place lineage of its own
// target into `aten::copy_(target_placeholder, value)`, rewrites the output tuple and renames
// the output specs. Several placements exist: ours (`early`, `end`) and faithful models of
// the upstream pass, PR #20744 and draft PR #13857, so the suite can show what it finds in them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"

namespace wb {

enum class Placement { Early, End, Upstream, Pr20744, Draft13857 };

std::string_view toString(Placement placement);  // "early", "end", "upstream", ...
std::optional<Placement> placementFromString(std::string_view text);
std::vector<Placement> allPlacements();

// Why one copy sits where it does.
struct CopyExplanation {
  std::string copyNode;     // name of the inserted copy_ node
  std::string buffer;       // the placeholder written (e.g. "b_cache")
  std::string value;        // the node whose contents are copied
  std::string rule;         // "R0" last placeholder, "R1" value defined, "R2" reads/writes the
                            // buffer's old contents, "R3" writes the value, "C" copy-to-copy
                            // order, "END" end of graph, "CLONE" cycle broken by a clone
  std::string bindingNode;  // the node the copy must follow ("" for END)
  std::string text;         // in words: "after %sum_1: reads b_cache through %select"
};

struct PlacedProgram {
  Program program;                        // the program with its copies, valid
  std::vector<CopyExplanation> copies;    // one per inserted copy, in graph order
  std::vector<std::string> skipped;       // mutation specs left without a copy, with reason
  // Set when the modelled algorithm itself fails on this program (e.g. pr20744's IndexError
  // on a program without placeholders). `program` is then the input, unchanged.
  std::optional<std::string> failure;
};

// Places the write-backs of a valid program (see validate()). `schemas` is the table the
// program's targets are looked up in (builtins plus the program's own `Schemas:` section).
PlacedProgram place(const Program& program, Placement placement, const SchemaTable& schemas);

// The schemas a program is analysed with: `base` plus every schema in `program.schemas`.
SchemaTable schemasFor(const Program& program, const SchemaTable& base);

}  // namespace wb
