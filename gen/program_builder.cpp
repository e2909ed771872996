// gen/program_builder.cpp: FX-style naming and program assembly for the generator and zoo.
#include "gen/program_builder.h"

#include <array>
#include <iterator>
#include <stdexcept>
#include <type_traits>


namespace wb::gen {

namespace {

// Ops that may be emitted but are not (yet) in core/schemas.txt, with their real schemas.
// The generator's own custom ops live in namespace `wbgen` and are declared in `Schemas:`.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kExtraSchemas{{
    {"aten::full",
     "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
     "Device? device=None, bool? pin_memory=None) -> Tensor"},
    {"aten::alias", "aten::alias(Tensor(a) self) -> Tensor(a)"},
    {"aten::t", "aten::t(Tensor(a) self) -> Tensor(a)"},
    {"aten::tanh", "aten::tanh(Tensor self) -> Tensor"},
    {"aten::_native_batch_norm_legit_functional",
     "aten::_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, "
     "Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> "
     "(Tensor, Tensor, Tensor, Tensor, Tensor)"},
    {"wbgen::update_state", "wbgen::update_state(Tensor(a!) state, Tensor x) -> ()"},
    {"wbgen::accumulate_into", "wbgen::accumulate_into(Tensor x, Tensor(a!) acc) -> ()"},
    {"wbgen::update_pair", "wbgen::update_pair(Tensor(a!) first, Tensor(b!) second, Tensor x) -> ()"},
    {"wbgen::scale_all_", "wbgen::scale_all_(Tensor(a!)[] self, Scalar s) -> ()"},
    {"wbgen::scaled", "wbgen::scaled(Tensor self, Scalar s) -> Tensor"},
}};

// Names FX never gives a node as they are (Python builtins and keywords): `sum` -> `sum_1`.
constexpr std::array<std::string_view, 24> kPythonReserved{
    "sum",   "max",  "min",  "abs",    "all",   "any",  "slice", "pow",
    "round", "input", "iter", "len",   "list",  "map",  "filter", "zip",
    "range", "set",  "dict", "str",    "int",   "float", "bool",  "type"};

bool isReserved(std::string_view name) {
  for (std::string_view r : kPythonReserved)
    if (r == name) return true;
  return false;
}

}  // namespace

std::optional<std::string> extraSchemaText(std::string_view target) {
  for (const auto& [name, text] : kExtraSchemas)
    if (name == target) return std::string(text);
  return std::nullopt;
}

TensorType tensorType(std::string dtype, const std::vector<std::int64_t>& dims) {
  TensorType t;
  t.dtype = std::move(dtype);
  t.shape.reserve(dims.size());
  for (std::int64_t d : dims) t.shape.push_back(Dim{d, {}});
  return t;
}

std::vector<std::int64_t> dimsOf(const TensorType& type) {
  std::vector<std::int64_t> dims;
  dims.reserve(type.shape.size());
  for (const Dim& d : type.shape) dims.push_back(d.size);
  return dims;
}

Arg intList(const std::vector<std::int64_t>& values) {
  std::vector<Arg> items;
  items.reserve(values.size());
  for (std::int64_t v : values) items.push_back(Arg::ofInt(v));
  return Arg::list(std::move(items));
}

Arg dtypeToken(std::string_view dtype) {
  if (dtype == "i64") return Arg::token("torch.int64");
  if (dtype == "b8") return Arg::token("torch.bool");
  return Arg::token("torch.float32");
}

std::string baseNameOfTarget(std::string_view target) {
  std::string_view name = target;
  if (auto colons = name.find("::"); colons != std::string_view::npos) name = name.substr(colons + 2);
  else if (auto dot = name.rfind('.'); dot != std::string_view::npos) return std::string(name.substr(dot + 1));
  if (auto dot = name.find('.'); dot != std::string_view::npos) name = name.substr(0, dot);
  return std::string(name);
}

ProgramBuilder::ProgramBuilder(const SchemaTable& table)
    : table_(&table), names_{"output"}, createdWithName_{kNotCreated}, nameIndex_(NameAt{&names_}, 32) {
  nameIndex_.insert(0);
}

std::string ProgramBuilder::freshName(std::string_view base) {
  std::string candidate(base);
  if (candidate.empty()) candidate = "node";
  auto take = [&](std::string name) {
    names_.push_back(std::move(name));
    createdWithName_.push_back(kNotCreated);
    nameIndex_.insert(static_cast<std::uint32_t>(names_.size() - 1));
    return names_.back();
  };
  if (!isReserved(candidate) && nameIndex_.find(candidate) == decltype(nameIndex_)::kNone) return take(std::move(candidate));
  int& next = nextSuffix_[std::string(base)];
  if (next == 0) next = 1;
  while (true) {
    std::string name = candidate + "_" + std::to_string(next++);
    if (nameIndex_.find(name) == decltype(nameIndex_)::kNone) return take(std::move(name));
  }
}

std::string ProgramBuilder::placeholder(std::string name, InputSpec spec, const TensorType& type) {
  std::string unique = freshName(name);
  Node node;
  node.name = unique;
  node.op = NodeOp::Placeholder;
  node.target = unique;
  node.typeText = formatTensorType(type);
  spec.name = unique;
  placeholders_.push_back(std::move(node));
  created(unique, true);
  placeholderNames_.push_back(unique);
  inputs_.push_back(std::move(spec));
  return unique;
}

namespace {
std::string flattenFqn(const std::string& fqn) {
  std::string out = fqn;
  for (char& c : out)
    if (c == '.') c = '_';
  return out;
}
}  // namespace

std::string ProgramBuilder::buffer(const std::string& fqn, const TensorType& type, bool persistent) {
  InputSpec spec;
  spec.kind = InputKind::Buffer;
  spec.target = fqn;
  spec.persistent = persistent;
  return placeholder("b_" + flattenFqn(fqn), std::move(spec), type);
}

std::string ProgramBuilder::parameter(const std::string& fqn, const TensorType& type) {
  InputSpec spec;
  spec.kind = InputKind::Parameter;
  spec.target = fqn;
  return placeholder("p_" + flattenFqn(fqn), std::move(spec), type);
}

std::string ProgramBuilder::userInput(std::string_view name, const TensorType& type) {
  InputSpec spec;
  spec.kind = InputKind::UserInput;
  return placeholder(std::string(name), std::move(spec), type);
}

void ProgramBuilder::declareIfNeeded(const std::string& target) {
  if (table_->find(target) != nullptr || declaredTargets_.contains(target)) return;
  if (auto text = extraSchemaText(target)) {
    declared_.push_back(*text);
    declaredTargets_.insert(target);
  }
}

void ProgramBuilder::created(const std::string& name, bool isPlaceholder) {
  const std::size_t index = isPlaceholder ? placeholders_.size() - 1 : body_.size() - 1;
  // Every node's name comes from freshName; the first node made with a name keeps it.
  if (const std::uint32_t n = nameIndex_.find(name); n != decltype(nameIndex_)::kNone && createdWithName_[n] == kNotCreated)
    createdWithName_[n] = static_cast<NodeId>(created_.size());
  created_.push_back({isPlaceholder, static_cast<std::uint32_t>(index)});
}

Arg ProgramBuilder::ref(std::string_view name) const {
  const std::uint32_t n = nameIndex_.find(name);
  if (n == decltype(nameIndex_)::kNone || createdWithName_[n] == kNotCreated)
    throw std::out_of_range("ProgramBuilder::ref: no node named " + std::string(name));
  return Arg::ref(createdWithName_[n]);
}

Arg ProgramBuilder::refList(const std::vector<std::string>& names) const {
  std::vector<Arg> items;
  for (const auto& n : names) items.push_back(ref(n));
  return Arg::list(std::move(items));
}

const std::string& ProgramBuilder::nameOf(NodeId id) const {
  const Created& c = created_.at(id);
  return c.isPlaceholder ? placeholders_[c.index].name : body_[c.index].name;
}

bool ProgramBuilder::hasSchema(std::string_view target) const {
  return table_->find(target) != nullptr || declaredTargets_.contains(target);
}

std::string ProgramBuilder::call(const std::string& target, std::vector<Arg> args, Kwargs kwargs,
                                 std::optional<TensorType> type,
                                 NodeMeta meta) {
  return addCall(target, std::move(args), std::move(kwargs), type ? &*type : nullptr, std::move(meta));
}

std::string ProgramBuilder::call(const std::string& target, std::vector<Arg> args, Kwargs kwargs,
                                 const TensorType& type, NodeMeta meta) {
  return addCall(target, std::move(args), std::move(kwargs), &type, std::move(meta));
}

std::string ProgramBuilder::addCall(const std::string& target, std::vector<Arg> args, Kwargs kwargs,
                                    const TensorType* type, NodeMeta meta) {
  declareIfNeeded(target);
  Node node;
  node.name = freshName(baseNameOfTarget(target));
  node.op = NodeOp::CallFunction;
  node.target = targets_(target);
  node.args = std::move(args);
  node.kwargs = std::move(kwargs);
  if (type) node.typeText = formatTensorType(*type);
  node.meta = std::move(meta);
  body_.push_back(std::move(node));
  created(body_.back().name, false);
  return body_.back().name;
}

std::string ProgramBuilder::getAttr(const std::string& attribute) {
  Node node;
  node.name = freshName(attribute);
  node.op = NodeOp::GetAttr;
  node.target = node.name;
  body_.push_back(std::move(node));
  created(body_.back().name, false);
  return body_.back().name;
}

std::string ProgramBuilder::callModule(const std::string& module, std::vector<Arg> args,
                                       std::optional<TensorType> type) {
  Node node;
  node.name = freshName(module);
  node.op = NodeOp::CallModule;
  node.target = module;
  node.args = std::move(args);
  if (type) node.typeText = formatTensorType(*type);
  body_.push_back(std::move(node));
  created(body_.back().name, false);
  return body_.back().name;
}

std::string ProgramBuilder::getitem(const std::string& of, std::int64_t index,
                                    std::optional<TensorType> type) {
  return call("operator.getitem", {ref(of), Arg::ofInt(index)}, {}, std::move(type));
}

std::string ProgramBuilder::getitem(const std::string& of, std::int64_t index, const TensorType& type) {
  return call("operator.getitem", {ref(of), Arg::ofInt(index)}, {}, type);
}

void ProgramBuilder::output(OutputKind kind, const std::string& value, std::string target) {
  returned_.push_back(ref(value));
  OutputSpec spec;
  spec.kind = kind;
  spec.name = value;
  spec.target = std::move(target);
  outputs_.push_back(std::move(spec));
}

void ProgramBuilder::permuteOutputs(const std::vector<std::size_t>& order) {
  if (order.size() != outputs_.size()) throw std::invalid_argument("permuteOutputs: wrong size");
  std::vector<Arg> returned;
  std::vector<OutputSpec> outputs;
  for (std::size_t i : order) {
    returned.push_back(returned_.at(i));
    outputs.push_back(outputs_.at(i));
  }
  returned_ = std::move(returned);
  outputs_ = std::move(outputs);
}

void ProgramBuilder::reserve(std::size_t nodes) {
  body_.reserve(nodes);
  created_.reserve(nodes);
}

// finish() of a builder that stays (`Self` const) or goes (an rvalue: its vectors are moved).
template <typename Self>
Program ProgramBuilder::finished(Self&& self) {
  constexpr bool kMove = !std::is_const_v<std::remove_reference_t<Self>>;
  auto take = [](auto& field) -> decltype(auto) {
    if constexpr (kMove) return std::move(field); else return field;
  };
  const std::size_t placeholders = self.placeholders_.size();
  Program program;
  std::vector<Node>& nodes = program.graph.nodes;
  nodes.reserve(placeholders + self.body_.size() + 1);
  auto append = [&](auto& from) {
    if constexpr (kMove) nodes.insert(nodes.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    else nodes.insert(nodes.end(), from.begin(), from.end());
  };
  append(self.placeholders_);
  append(self.body_);
  Node out;
  out.name = "output";
  out.op = NodeOp::Output;
  out.target = "output";
  out.args.push_back(Arg::tuple(take(self.returned_)));  // not `= {...}`, which copies the tuple
  program.graph.nodes.push_back(std::move(out));
  // From creation order (the output node last) to placeholders first, then the rest.
  std::vector<NodeId> createdToIndex(self.created_.size() + 1);
  for (std::size_t c = 0; c < self.created_.size(); ++c)
    createdToIndex[c] = static_cast<NodeId>(self.created_[c].isPlaceholder ? self.created_[c].index
                                                                            : placeholders + self.created_[c].index);
  createdToIndex.back() = static_cast<NodeId>(program.graph.nodes.size() - 1);
  renumberReferences(program.graph, createdToIndex);
  program.signature.inputs = take(self.inputs_);
  program.signature.outputs = take(self.outputs_);
  program.schemas = take(self.declared_);
  return program;
}

Program ProgramBuilder::finish() const& { return finished(*this); }
Program ProgramBuilder::finish() && { return finished(std::move(*this)); }

}  // namespace wb::gen
