// proofs/op_model.cpp: op classes, argument binding and reference resolution for the executors.
#include "proofs/op_model.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

namespace wb::proofs::detail {

namespace {

struct NamedKind {
  std::string_view name;
  OpKind kind;
};

// Functional base names (in-place `_` stripped) of the ops the oracle interprets.
constexpr std::array kKinds = {
    NamedKind{"add", OpKind::Add},
    NamedKind{"sub", OpKind::Sub},
    NamedKind{"rsub", OpKind::Rsub},
    NamedKind{"mul", OpKind::Mul},
    NamedKind{"neg", OpKind::Neg},
    NamedKind{"sum", OpKind::Sum},
    NamedKind{"mean", OpKind::Mean},
    NamedKind{"index_put", OpKind::IndexPut},
    NamedKind{"_index_put_impl", OpKind::IndexPut},
    NamedKind{"index_copy", OpKind::IndexCopy},
    NamedKind{"index_add", OpKind::IndexAdd},
    NamedKind{"index_select", OpKind::IndexSelect},
    NamedKind{"index", OpKind::IndexTensor},
    NamedKind{"slice_scatter", OpKind::SliceScatter},
    NamedKind{"select_scatter", OpKind::SelectScatter},
    NamedKind{"scatter", OpKind::Scatter},
    NamedKind{"scatter_add", OpKind::ScatterAdd},
    NamedKind{"cat", OpKind::Cat},
    NamedKind{"stack", OpKind::Stack},
    NamedKind{"copy", OpKind::Copy},
    NamedKind{"clone", OpKind::Clone},
    NamedKind{"_to_copy", OpKind::Clone},
    NamedKind{"lift_fresh_copy", OpKind::Clone},
    NamedKind{"_to_dim_order_copy", OpKind::Clone},
    NamedKind{"_clone_dim_order", OpKind::Clone},
    NamedKind{"where", OpKind::Where},
    NamedKind{"fill", OpKind::Fill},
    NamedKind{"zero", OpKind::Zero},
    NamedKind{"masked_fill", OpKind::MaskedFill},
    NamedKind{"zeros", OpKind::Factory},
    NamedKind{"ones", OpKind::Factory},
    NamedKind{"full", OpKind::Factory},
    NamedKind{"zeros_like", OpKind::FactoryLike},
    NamedKind{"ones_like", OpKind::FactoryLike},
    NamedKind{"full_like", OpKind::FactoryLike},
    NamedKind{"arange", OpKind::Arange},
    NamedKind{"_foreach_add", OpKind::ForeachAdd},
    NamedKind{"_foreach_sub", OpKind::ForeachSub},
    NamedKind{"_foreach_mul", OpKind::ForeachMul},
    NamedKind{"sym_size", OpKind::SymSize},
    NamedKind{"select", OpKind::Select},
    NamedKind{"slice", OpKind::Slice},
    NamedKind{"narrow", OpKind::Narrow},
    NamedKind{"expand", OpKind::Expand},
    NamedKind{"broadcast_to", OpKind::Expand},
    NamedKind{"expand_as", OpKind::ExpandAs},
    NamedKind{"transpose", OpKind::Transpose},
    NamedKind{"t", OpKind::T},
    NamedKind{"permute", OpKind::Permute},
    NamedKind{"unsqueeze", OpKind::Unsqueeze},
    NamedKind{"squeeze", OpKind::Squeeze},
    NamedKind{"view", OpKind::View},
    NamedKind{"reshape", OpKind::View},
    NamedKind{"_unsafe_view", OpKind::View},
    NamedKind{"view_as", OpKind::ViewAs},
    NamedKind{"reshape_as", OpKind::ViewAs},
    NamedKind{"diagonal", OpKind::Diagonal},
    NamedKind{"as_strided", OpKind::AsStrided},
    NamedKind{"alias", OpKind::Alias},
    NamedKind{"detach", OpKind::Alias},
    NamedKind{"lift_fresh", OpKind::Alias},
    NamedKind{"contiguous", OpKind::Contiguous},
    NamedKind{"split", OpKind::Split},
    NamedKind{"split_with_sizes", OpKind::SplitWithSizes},
    NamedKind{"chunk", OpKind::Chunk},
    NamedKind{"unbind", OpKind::Unbind},
};

// The `*_copy` view variants ExecuTorch's view pass may turn into views, by the view they copy
// (`_unsafe_view` has no alias annotation and is treated like one).
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kCopyVariants = {{
    {"view_copy", "view"},
    {"slice_copy", "slice"},
    {"select_copy", "select"},
    {"permute_copy", "permute"},
    {"expand_copy", "expand"},
    {"transpose_copy", "transpose"},
    {"t_copy", "t"},
    {"unsqueeze_copy", "unsqueeze"},
    {"squeeze_copy", "squeeze"},
    {"split_copy", "split"},
    {"split_with_sizes_copy", "split_with_sizes"},
    {"unbind_copy", "unbind"},
    {"alias_copy", "alias"},
    {"as_strided_copy", "as_strided"},
    {"diagonal_copy", "diagonal"},
    {"narrow_copy", "narrow"},
    {"_unsafe_view", "view"},
}};

std::optional<OpKind> kindOf(std::string_view base) {
  for (const NamedKind& k : kKinds)
    if (k.name == base) return k.kind;
  return std::nullopt;
}

bool sameSet(const std::optional<AliasAnnotation>& a, const std::optional<AliasAnnotation>& b) {
  return a && b && !a->beforeSets.empty() && a->beforeSets == b->beforeSets;
}

}  // namespace

bool sameAliasSet(const SchemaType& a, const SchemaType& b) { return sameSet(a.alias, b.alias); }

OpModel modelOf(const Node& node, const SchemaTable& schemas) {
  OpModel m;
  if (node.op != NodeOp::CallFunction) return m;
  if (node.target == "operator.getitem") {
    m.getitem = true;
    return m;
  }
  m.schema = schemas.find(node.target, node.args.size());
  if (!m.schema) return m;
  const Schema& s = *m.schema;
  m.inplace = s.isInplaceKind();
  std::string_view base = s.name;
  if (m.inplace && base.ends_with("_")) base.remove_suffix(1);
  for (const auto& [copyName, viewName] : kCopyVariants)
    if (base == copyName) {
      m.copyVariant = true;
      base = viewName;
      break;
    }
  for (const SchemaArgument& r : s.returns)
    for (const SchemaArgument& a : s.arguments)
      if (a.kwargOnly && a.type.isWrite() && sameSet(r.type.alias, a.type.alias)) m.outVariant = true;
  for (const SchemaArgument& a : s.arguments)
    if (a.kwargOnly && a.type.isTensorList() && a.type.isWrite() && s.returns.empty()) m.outVariant = true;
  if (!s.returns.empty())
    for (std::size_t k = 0; k < s.arguments.size() && m.resultWrites < 0; ++k)
      if (s.arguments[k].type.isWrite() && sameSet(s.returns[0].type.alias, s.arguments[k].type.alias))
        m.resultWrites = static_cast<int>(k);
  m.kind = kindOf(base).value_or(OpKind::Hash);
  // A view only when the schema says so (or it is a copy variant): a custom op that shares a
  // view's name is hashed.
  if (isView(m.kind) && !m.copyVariant && !m.outVariant && !m.inplace) {
    const bool aliases = !s.returns.empty() && s.returns[0].type.alias.has_value();
    if (!aliases && m.kind != OpKind::Contiguous) m.kind = OpKind::Hash;
  }
  if (isView(m.kind) && m.inplace) m.kind = OpKind::Hash;  // transpose_, unsqueeze_: metadata in place
  return m;
}

Arg parseDefault(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text == "None") return Arg::none();
  if (text == "True") return Arg::ofBool(true);
  if (text == "False") return Arg::ofBool(false);
  if (!text.empty() && text.front() == '[') {
    std::vector<Arg> items;
    std::string_view inner = text.substr(1, text.size() >= 2 ? text.size() - 2 : 0);
    while (!inner.empty()) {
      const std::size_t comma = inner.find(',');
      const std::string_view item = inner.substr(0, comma);
      if (item.find_first_not_of(' ') != std::string_view::npos) items.push_back(parseDefault(item));
      if (comma == std::string_view::npos) break;
      inner.remove_prefix(comma + 1);
    }
    return Arg::list(std::move(items));
  }
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"'))
    return Arg::ofString(std::string(text.substr(1, text.size() - 2)));
  std::int64_t i = 0;
  if (auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
      ec == std::errc() && p == text.data() + text.size())
    return Arg::ofInt(i);
  double d = 0;
  if (auto [q, ed] = std::from_chars(text.data(), text.data() + text.size(), d);
      ed == std::errc() && q == text.data() + text.size())
    return Arg::ofFloat(d);
  return Arg::token(std::string(text));
}

Bound bindArguments(const Node& node, const Schema& schema) {
  Bound b;
  const std::vector<SchemaArgument>& params = schema.arguments;
  std::vector<std::size_t> positional;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (!params[i].kwargOnly) positional.push_back(i);
  if (node.args.size() > positional.size()) {
    b.error = "too many positional arguments for " + schema.qualifiedName();
    return b;
  }
  std::vector<bool> set(params.size(), false);
  b.args.resize(params.size());
  for (std::size_t k = 0; k < node.args.size(); ++k) {
    b.args[positional[k]] = node.args[k];
    set[positional[k]] = true;
  }
  for (const auto& [name, value] : node.kwargs) {
    const std::optional<std::size_t> i = schema.argumentIndex(name);
    if (!i) {
      b.error = "unknown keyword argument '" + name + "' for " + schema.qualifiedName();
      return b;
    }
    b.args[*i] = value;
    set[*i] = true;
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (set[i]) continue;
    const SchemaArgument& p = params[i];
    if (!(p.defaultValue || p.type.optional || p.type.listOptional)) {
      b.error = "missing argument '" + p.name + "' of " + schema.qualifiedName();
      return b;
    }
    b.args[i] = p.defaultValue ? parseDefault(*p.defaultValue) : Arg::none();
  }
  return b;
}

std::vector<bool> returnedAtVisiblePositions(const Program& program) {
  const Graph& g = program.graph;
  std::vector<bool> kept(g.nodes.size(), false);
  const std::span<const Arg> returned = g.returnedArgs();
  const std::vector<OutputSpec>& specs = program.signature.outputs;
  auto mark = [&](const Arg& a, auto& self) -> void {
    if (a.isRef()) kept[a.node] = true;
    else if (a.isSequence())
      for (const Arg& item : a.items) self(item, self);
  };
  for (std::size_t p = 0; p < returned.size(); ++p) {
    if (p < specs.size() && isMutation(specs[p].kind)) continue;
    mark(returned[p], mark);
  }
  return kept;
}

std::vector<std::size_t> visibleOutputPositions(const Program& program) {
  std::vector<std::size_t> positions;
  const std::vector<OutputSpec>& specs = program.signature.outputs;
  const std::size_t returned = program.graph.returnedArgs().size();
  for (std::size_t i = 0; i < returned; ++i)
    if (i >= specs.size() || specs[i].kind != OutputKind::BufferMutation) positions.push_back(i);
  return positions;
}

std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> getitemUsers(const Program& program) {
  const Graph& g = program.graph;
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> users(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != NodeOp::CallFunction || n.target != "operator.getitem" || n.args.empty() || !n.args[0].isRef()) continue;
    const std::int64_t element = n.args.size() >= 2 && n.args[1].kind == Arg::Kind::Int ? n.args[1].integer : -1;
    users[n.args[0].node].emplace_back(i, element);
  }
  return users;
}

namespace {
constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
}  // namespace

std::uint64_t scalarBits(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e18)
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return mix64(bits);  // the oracle's element of a non-integral scalar
}

std::uint64_t textBits(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then mixed
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return mix64(h);
}

}  // namespace wb::proofs::detail
