// gen/program_builder.h: assembling a Program node by node, as torch.export would print it.
//
// Shared by the random generator and the model zoo. It hands out FX-style unique names
// (`add`, `add_1`, `sum_1` for Python builtins), through which its callers refer to the nodes
// (ref()), keeps placeholders first whenever they are added, writes type annotations, and declares in the program's `Schemas:` section every op
// the built-in table lacks but wbcheck knows the schema of (extraSchemaText), so each emitted
// op has a schema unless it is deliberately schema-less.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "core/name_index.h"
#include "core/schema.h"
#include "core/shared_string.h"

namespace wb::gen {

// The schema of an op the generator or zoo emits that the built-in table may lack (creation
// ops, batch-norm functional, the generator's own custom ops), or nullopt.
std::optional<std::string> extraSchemaText(std::string_view target);

// "f32", {2, 3} -> f32[2, 3].
TensorType tensorType(std::string dtype, const std::vector<std::int64_t>& dims);
std::vector<std::int64_t> dimsOf(const TensorType& type);

// `[a, b]` of integers.
Arg intList(const std::vector<std::int64_t>& values);
// The dtype token of a short dtype code: "f32" -> torch.float32.
Arg dtypeToken(std::string_view dtype);

using Kwargs = std::vector<std::pair<std::string, Arg>>;

class ProgramBuilder {
 public:
  explicit ProgramBuilder(const SchemaTable& table);
  // Its name index reads the names where the builder keeps them: it stays where it was made.
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  // FX's naming: base, base_1, base_2, ...; a Python builtin (`sum`, `slice`) starts at _1.
  std::string freshName(std::string_view base);

  // Placeholders, in input-spec order. Buffers get `b_<fqn>` (dots -> `_`), parameters `p_`.
  std::string buffer(const std::string& fqn, const TensorType& type, bool persistent = true);
  std::string parameter(const std::string& fqn, const TensorType& type);
  std::string userInput(std::string_view name, const TensorType& type);

  // A reference to the node named `name` (a name this builder handed out; std::out_of_range
  // otherwise), and `[a, b]` of such references. The node's index in the finished program is
  // not known while placeholders may still be added: a reference holds the node's number in
  // the order of creation until finish() renumbers it.
  Arg ref(std::string_view name) const;
  Arg refList(const std::vector<std::string>& names) const;
  // The name of the node a reference made by ref() refers to (for reading body()).
  const std::string& nameOf(NodeId created) const;

  // A call_function node named after its target; `type` becomes the annotation.
  std::string call(const std::string& target, std::vector<Arg> args, Kwargs kwargs = {},
                   std::optional<TensorType> type = std::nullopt,
                   NodeMeta meta = {});
  // The same with a type, which is only read (not copied into an optional first).
  std::string call(const std::string& target, std::vector<Arg> args, Kwargs kwargs, const TensorType& type,
                   NodeMeta meta = {});
  std::string getAttr(const std::string& attribute);
  // A call_module node `self.<module>(args)` (no schema: the analysis treats it conservatively).
  std::string callModule(const std::string& module, std::vector<Arg> args, std::optional<TensorType> type);
  std::string getitem(const std::string& of, std::int64_t index, std::optional<TensorType> type);
  std::string getitem(const std::string& of, std::int64_t index, const TensorType& type);

  // One returned value and its output spec (in order).
  void output(OutputKind kind, const std::string& value, std::string target = {});

  // Whether `target` has a schema (built-in or declared so far).
  bool hasSchema(std::string_view target) const;
  const std::vector<std::string>& declaredSchemas() const { return declared_; }
  const std::vector<std::string>& placeholderNames() const { return placeholderNames_; }
  // The nodes that are no placeholders, in order; their references are in creation order
  // (nameOf).
  const std::vector<Node>& body() const { return body_; }
  std::size_t outputCount() const { return outputs_.size(); }
  const std::vector<OutputSpec>& outputSpecs() const { return outputs_; }
  // Reorders the outputs (and their specs) by `order`, a permutation of their indices.
  void permuteOutputs(const std::vector<std::size_t>& order);

  Program finish() const&;
  // The same, moving the nodes and specs out of a builder that is not used again.
  Program finish() &&;
  // Room for this many nodes, placeholders and body together (a hint).
  void reserve(std::size_t nodes);

 private:
  std::string placeholder(std::string name, InputSpec spec, const TensorType& type);
  void declareIfNeeded(const std::string& target);
  std::string addCall(const std::string& target, std::vector<Arg> args, Kwargs kwargs, const TensorType* type,
                      NodeMeta meta);
  template <typename Self>
  static Program finished(Self&& self);
  // Records a node added to placeholders_ or body_ (the last one of either).
  void created(const std::string& name, bool isPlaceholder);

  const SchemaTable* table_;
  // Every name handed out ("output" first), and per name the node created with it (kNotCreated
  // for a name no node has taken yet). A builder makes a name per node; a flat index over the
  // list costs no allocation per name, as a std::set or std::map of the names did.
  static constexpr NodeId kNotCreated = std::numeric_limits<NodeId>::max();
  struct NameAt {
    const std::vector<std::string>* names;
    std::string_view operator()(std::uint32_t i) const { return (*names)[i]; }
  };
  std::vector<std::string> names_;
  std::vector<NodeId> createdWithName_;
  FlatNameIndex<NameAt> nameIndex_;
  std::map<std::string, int, std::less<>> nextSuffix_;
  std::vector<Node> placeholders_;
  std::vector<std::string> placeholderNames_;
  std::vector<InputSpec> inputs_;
  std::vector<Node> body_;
  // Per node in creation order: whether it is a placeholder, and its index in placeholders_ or
  // body_.
  struct Created {
    bool isPlaceholder = false;
    std::uint32_t index = 0;
  };
  std::vector<Created> created_;
  std::vector<Arg> returned_;
  std::vector<OutputSpec> outputs_;
  std::vector<std::string> declared_;
  std::set<std::string, std::less<>> declaredTargets_;
  // One text block per op, shared by its nodes (as the reader's): the passes that look a
  // target up then find its later nodes by the block, without hashing the text again.
  TargetInterner targets_;
};

// "aten::add.Tensor" -> "add"; "operator.getitem" -> "getitem"; "my_ops::mystery" -> "mystery".
std::string baseNameOfTarget(std::string_view target);

}  // namespace wb::gen
