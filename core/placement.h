// core/placement.h: the write-back pass (DESIGN §6).
//
// A placement turns each mutation output whose value is not an in-place lineage of its own
// target into `aten::copy_(target_placeholder, value)`, rewrites the output tuple and renames
// the output specs. Several placements exist: ours (`early`, `end`) and faithful models of
// the upstream pass, PR #20744 (one per version of the branch) and draft PR #13857, so the suite
// can show what it finds in them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/alias.h"
#include "core/ir.h"
#include "core/schema.h"

namespace wb {

// PR #20744 is modelled version by version (placement_models.h); its placements are named
// `pr20744@<commit>`, and plain `pr20744` reads as the latest version.
enum class Placement { Early, End, Upstream, Pr20744_ff2892d4, Pr20744_b6457f4, Pr20744_82a8901, Draft13857 };
inline constexpr Placement kLatestPr20744 = Placement::Pr20744_82a8901;

// "early", "end", "upstream", "pr20744@ff2892d4", ..., "draft13857": the name every output
// (findings, reports, JSON, regression headers) prints, and placementFromString reads back.
std::string_view toString(Placement placement);
// Reads a name toString prints, or the alias "pr20744" (the latest version of the PR).
std::optional<Placement> placementFromString(std::string_view text);
// Every placement, in the order tables and help texts list them.
std::vector<Placement> allPlacements();
// The names of allPlacements() joined by `separator` ("early | end | ..."), for help texts.
std::string placementNames(std::string_view separator);
// True for the models of PR #20744, whichever version.
bool isPr20744(Placement placement);
// True for the models of real code (`upstream`, every `pr20744@...`, `draft13857`): they keep
// upstream's output layout (copies first, positional spec renaming: bug B2) and FX's copy names.
bool isModelOfRealCode(Placement placement);

// The rule that binds a copy where it is (DESIGN §6); toString gives the name `place --explain`,
// `--json` and the corpus files print.
enum class CopyRule : std::uint8_t {
  R0,         // "R0": the last placeholder (copies never go among the placeholders)
  R1,         // "R1": the value is defined there
  R2,         // "R2": a node reads or writes the buffer's old contents through some alias
  R3,         // "R3": a node may write the value's storage
  CopyOrder,  // "C": another copy reads what this one overwrites, or writes the same target
  End,        // "END": the end of the graph
  Clone,      // "CLONE": the copy reads a clone that breaks a cycle of copies
};
std::string_view toString(CopyRule rule);
std::optional<CopyRule> copyRuleFromString(std::string_view text);

// Why one copy sits where it does.
struct CopyExplanation {
  std::string copyNode;     // name of the inserted copy_ node
  std::string buffer;       // the placeholder written (e.g. "b_cache")
  std::string value;        // the node whose contents are copied
  CopyRule rule = CopyRule::End;
  std::string bindingNode;  // the node the copy must follow ("" for END)
  std::string text;         // in words: "after %sum_1: reads b_cache through %select"
};

struct PlacedProgram {
  // The program with its copies. Valid for every placement but the models of real code
  // (`upstream`, every `pr20744@...`, `draft13857`), whose positional renaming of mutation specs
  // (bug B2) can leave specs naming values other than the ones at their positions, exactly as
  // ExecuTorch's signature then does.
  Program program;
  std::vector<CopyExplanation> copies;    // one per inserted copy, in graph order
  std::vector<std::string> skipped;       // mutation specs left without a copy, with reason
  // Set when the modelled algorithm itself fails on this program (e.g. pr20744's IndexError
  // on a program without placeholders). `program` is then the input, unchanged.
  std::optional<std::string> failure;
  // Set only with PlaceOptions::keepInput: the placement left the program exactly as it was
  // (it inserted nothing), and `program` is empty rather than a copy of it.
  bool keptInput = false;
};

// What place() makes besides the placed program. The defaults make everything; the oracle,
// which places every program it checks and reads only the program, asks for less.
struct PlaceOptions {
  // Where `early` or `end` leaves the program as it is, say so (keptInput) instead of holding
  // a copy: for a caller that keeps the input anyway (about a third of generated programs
  // need no copy).
  bool keepInput = false;
  // The copies' explanations (PlacedProgram::copies). Off: `early` and `end` leave `copies`
  // empty (the other placements make them all the same).
  bool explain = true;
};

// Places the write-backs of a valid program (see validate()). `schemas` is the table the
// program's targets are looked up in (builtins plus the program's own `Schemas:` section).
PlacedProgram place(const Program& program, Placement placement, const SchemaTable& schemas);
// The same, consuming `program`: `early` moves its nodes into the result instead of copying
// them (the other placements copy as the const& version does). Same result, same explanations.
PlacedProgram place(Program&& program, Placement placement, const SchemaTable& schemas);
// The same as place(const Program&), making what `options` asks for (see PlaceOptions).
PlacedProgram place(const Program& program, Placement placement, const SchemaTable& schemas,
                    const PlaceOptions& options);

// The schemas a program is analysed with: `base` plus every schema in `program.schemas`.
SchemaTable schemasFor(const Program& program, const SchemaTable& base);

// ---------------------------------------------------------------------------------------------
// Our placements (place() dispatches to them; see also placement_models.h).

// The mutation outputs a correct placement writes back: every BUFFER_MUTATION /
// USER_INPUT_MUTATION output whose value is not an in-place lineage of *its own* target
// (args[0] of in-place-kind schemas, followed back to the spec's target placeholder). A
// placed program's copies are such lineages, so placing it again selects nothing.
struct WriteBack {
  std::size_t outputIndex = 0;  // output spec index
  NodeId buffer = kNoNode;      // the target placeholder
  NodeId value = kNoNode;       // the returned node
};
struct WriteBackSelection {
  std::vector<WriteBack> writeBacks;  // in output-spec order
  std::vector<std::string> skipped;   // one line per mutation output left alone, with the reason
};
WriteBackSelection selectWriteBacks(const Program& program, const AliasInfo& aliases);

// `end`: every copy just before the output node, in output-spec order; positions kept.
PlacedProgram placeEnd(const Program& program, const SchemaTable& schemas);
PlacedProgram placeEnd(const Program& program, const SchemaTable& schemas, const PlaceOptions& options);

// `early` (DESIGN §6): each copy right after the latest of R0 the last placeholder, R1 the
// value's definition, R2 every non-output node reading or writing the buffer's root, R3 every
// node that may write a root of the value; copies that read a buffer another copy writes go
// first; a cycle of such copies gets a clone of one value.
PlacedProgram placeEarly(const Program& program, const SchemaTable& schemas);
PlacedProgram placeEarly(Program&& program, const SchemaTable& schemas);  // consumes `program`
PlacedProgram placeEarly(const Program& program, const SchemaTable& schemas, const PlaceOptions& options);

// The decisions of `early` without the graph surgery, in input-graph terms (for benchmarks and
// for the proofs, which check them against their own constraints).
struct EarlyPlan {
  struct Clone {
    std::size_t outputIndex = 0;  // the copy of this output reads a clone of its value
    NodeId value = kNoNode;       // the value cloned
    std::size_t afterNode = 0;    // the clone goes right after this input node
  };
  struct Copy {
    WriteBack writeBack;
    std::size_t afterNode = 0;    // right after this input node (after any clones there)
    CopyRule rule = CopyRule::R0;  // never End: every early copy has a binding
    // What binds it: a node of the input graph, or another copy / a clone of this plan.
    enum class Binding { Node, Copy, Clone } bindingKind = Binding::Node;
    std::size_t binding = 0;      // node index, index into copies, or index into clones
    NodeId via = kNoNode;         // for R2/R3/C: the value through which the root is touched
    RootId root = kNoNode;        // for R2/R3/C: the root touched
    bool bindingWrites = false;   // for R2: the binding node writes (rather than reads) the buffer
    std::optional<std::size_t> clone;  // index into clones when the copy reads a clone
  };
  std::vector<Clone> clones;          // in final graph order
  std::vector<Copy> copies;           // in final graph order
  std::vector<std::string> skipped;
};
EarlyPlan planEarly(const Program& program, const AliasInfo& aliases);

}  // namespace wb
