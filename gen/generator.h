// gen/generator.h: the choice-driven random program generator (DESIGN §9).
//
// One generator, many drivers: every decision comes from a Choices source (gen/choices.h), so
// `wbcheck gen --seed`, libFuzzer (ByteChoices) and RapidCheck produce programs the same way.
// Programs are valid by construction and never filtered: every value carries a static type
// annotation, shapes broadcast correctly, in-place ops only write writable tensors of matching
// shape (never expand views), list ops get matching lengths, node names are unique as FX makes
// them, there is at most one mutation spec per target, and every emitted op has a schema in the
// built-in table or is declared in the program's `Schemas:` section (except the deliberately
// schema-less ones). So validate() holds and readProgram(writeProgram(p)) == p.
//
// Swarm testing (Csmith/YARPGen policies): at the start of each case a Policy switches every
// hazard family of DESIGN §9 on or off. Two modes: realistic (what export + to_edge + reinplace
// produce) and adversarial (anything valid).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"
#include "gen/choices.h"

namespace wb::gen {

enum class GenMode { Realistic, Adversarial };
std::string_view toString(GenMode mode);  // "realistic", "adversarial"
std::optional<GenMode> genModeFromString(std::string_view text);

// The hazard families of DESIGN §9 / executorch-semantics §4.4, each switchable per case.
struct Policy {
  bool copyViews = false;            // *_copy views (view_copy, slice_copy, ...): H5, B3
  bool realViews = false;            // aten views (view, slice, expand, ...): adversarial only
  bool viewsOfViews = false;         // a view whose base is itself a view
  bool inplaceOnBuffers = false;     // index_put_, index_copy_, add_ ... on a buffer
  bool inplaceOnValues = false;      // in-place ops on computed values and their ancestors: H3, H10
  bool listOps = false;              // Tensor(a!)[] list ops (_foreach_*_, custom): H4
  bool outVariants = false;          // add.out, mm.out, cat.out: adversarial only
  bool shareAlloc = false;           // `# meta: _share_alloc_with_arg_idx=k`: H6
  bool schemaLess = false;           // custom ops with no schema anywhere
  bool mutableCustomOps = false;     // custom ops with Tensor(a!) args; llama::update_cache
  bool delegates = false;            // executorch_call_delegate + get_attr + getitems: H2, H9
  bool kvCacheOps = false;           // index_put / slice_scatter / index_copy / update_cache
  bool severalBuffers = false;
  bool userInputMutation = false;
  bool placeholderValues = false;    // mutation value is a placeholder (copy elision): B1
  bool dependentCopies = false;      // a mutation value aliases another mutated buffer: B3, H8
  bool cyclicCopies = false;         // a := old b, b := old a
  bool lineageSameTarget = false;    // mutation value is an in-place chain on its own target
  bool lineageOtherTarget = false;   // ... on another buffer or user input: B1
  bool noPlaceholders = false;       // no inputs at all: H7
  bool outputsAliasBuffers = false;  // user outputs that are buffers or views of them
  bool fqnCollision = false;         // a buffer FQN equal to a user-input name (§2.1 step 2)
  bool shuffledOutputs = false;      // output specs in any order (adversarial): B2 shapes
};

struct GenOptions {
  std::optional<GenMode> mode;     // nullopt: drawn from the Choices
  std::optional<Policy> policy;    // nullopt: drawn from the Choices (swarm testing)
  int maxNodes = 24;               // body nodes (not counting placeholders and output)
  int maxBuffers = 4;
  int maxUserInputs = 4;
  std::int64_t maxShapeElements = 24;  // elements per tensor
  int maxRank = 3;
};

struct Generated {
  Program program;
  GenMode mode = GenMode::Realistic;
  Policy policy;
  // The hazard families that actually occur in `program` (names as in featureNames()),
  // recorded where the generator emits them.
  std::vector<std::string> features;
};

// Every feature name the generator can record, for statistics and tests.
std::vector<std::string> featureNames();

// The generator holds its options and the schema table it checks targets against.
class Generator {
 public:
  explicit Generator(GenOptions options = {});
  Generator(GenOptions options, SchemaTable schemas);

  Generated generate(Choices& choices) const;
  const GenOptions& options() const { return options_; }
  const SchemaTable& schemas() const { return schemas_; }

 private:
  GenOptions options_;
  SchemaTable schemas_;
};

// Conveniences over a one-off Generator (each parses the built-in table: use Generator for
// loops).
Program generateProgram(Choices& choices, const GenOptions& options = {});
Program generateFromSeed(std::uint64_t seed, const GenOptions& options = {});
Program generateFromBytes(std::span<const std::uint8_t> bytes, const GenOptions& options = {});

// Coverage statistics over many programs (`wbcheck gen --stats N`): how often each feature,
// op target and mode occurs, so that nothing is silently never generated.
struct GenStats {
  int programs = 0;
  std::int64_t nodes = 0;                    // body nodes over all programs
  std::int64_t mutationSpecs = 0;
  std::map<std::string, int> modes;          // programs per mode
  std::map<std::string, int> features;       // programs in which the feature occurs
  std::map<std::string, int> ops;            // programs in which the target occurs
  // Programs with at least one op of each schema-less kind (the oracle gives those every
  // behaviour their contract allows): schemaLessKinds() names them.
  std::map<std::string, int> schemaLess;
};

// "executorch_call_delegate", "undeclared custom op" (a call_function target with `::` and no
// schema in the generator's table or the program's own), "call_module", "higher-order op".
std::vector<std::string> schemaLessKinds();

// Programs from seeds firstSeed, firstSeed+1, ..., firstSeed+count-1.
GenStats collectStats(std::uint64_t firstSeed, int count, const GenOptions& options = {});
// A plain-text table: every feature (including those that never occurred, marked), modes, ops.
std::string formatStats(const GenStats& stats);

}  // namespace wb::gen
