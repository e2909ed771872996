// oracle/ops.cpp: op classification, argument binding and the oracle's supplementary schemas.
#include "oracle/ops.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/name_index.h"

namespace wb::oracle::detail {

namespace {

struct NamedKind {
  std::string_view name;
  OpKind kind;
};

// Functional base names (in-place `_` already stripped) of the interpreted ops.
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

// The `*_copy` view variants ExecuTorch's ReplaceViewCopyWithViewPass may turn into views, by
// the name of the view they copy. `_unsafe_view` is listed too: it is a view at runtime but has
// no alias annotation, so it is treated exactly like a copy variant (core/alias.h does the same).
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

bool sameAliasSet(const std::optional<AliasAnnotation>& a, const std::optional<AliasAnnotation>& b) {
  return a && b && !a->beforeSets.empty() && a->beforeSets == b->beforeSets;
}

}  // namespace

OpInfo classify(const Node& node, const SchemaTable& schemas) {
  OpInfo info;
  info.opId = hashText(node.target);
  if (node.op != NodeOp::CallFunction) return info;
  if (node.target == "operator.getitem") {
    info.getitem = true;
    return info;
  }
  info.schema = schemas.find(node.target, node.args.size());
  if (!info.schema) return info;
  const Schema& s = *info.schema;
  info.inplace = s.isInplaceKind();
  for (const std::vector<SchemaArgument>* list : {&s.arguments, &s.returns})
    for (const SchemaArgument& a : *list)
      if (a.type.alias || a.type.containerAlias) info.annotated = true;
  std::string_view base = s.name;
  if (info.inplace && base.ends_with("_")) base.remove_suffix(1);
  for (const auto& [copyName, viewName] : kCopyVariants) {
    if (base == copyName) {
      info.copyVariant = true;
      base = viewName;
      break;
    }
  }
  // `.out` variants: a return aliasing a written keyword-only argument.
  for (const SchemaArgument& r : s.returns)
    for (const SchemaArgument& a : s.arguments)
      if (a.kwargOnly && a.type.isWrite() && sameAliasSet(r.type.alias, a.type.alias)) info.outVariant = true;
  for (const SchemaArgument& a : s.arguments)
    if (a.kwargOnly && a.type.isTensorList() && a.type.isWrite() && s.returns.empty()) info.outVariant = true;
  if (!s.returns.empty())
    for (std::size_t k = 0; k < s.arguments.size() && info.resultWrites < 0; ++k)
      if (s.arguments[k].type.isWrite() && sameAliasSet(s.returns[0].type.alias, s.arguments[k].type.alias))
        info.resultWrites = static_cast<std::int32_t>(k);
  info.kind = kindOf(base).value_or(OpKind::Hash);
  // A view is interpreted only when its schema says it is one (or it is a copy variant), so a
  // custom op that happens to share a name is hashed rather than misread.
  if (isViewKind(info.kind) && !info.copyVariant && !info.outVariant && !info.inplace) {
    bool aliases = !s.returns.empty() && s.returns[0].type.alias.has_value();
    if (!aliases && info.kind != OpKind::Contiguous) info.kind = OpKind::Hash;
  }
  // In-place views (transpose_, unsqueeze_) change metadata in place: uninterpreted.
  if (isViewKind(info.kind) && info.inplace) info.kind = OpKind::Hash;
  return info;
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
      std::size_t comma = inner.find(',');
      std::string_view item = inner.substr(0, comma);
      if (item.find_first_not_of(' ') != std::string_view::npos) items.push_back(parseDefault(item));
      if (comma == std::string_view::npos) break;
      inner.remove_prefix(comma + 1);
    }
    return Arg::list(std::move(items));
  }
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"'))
    return Arg::ofString(std::string(text.substr(1, text.size() - 2)));
  std::int64_t i = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && p == text.data() + text.size()) return Arg::ofInt(i);
  double d = 0;
  auto [q, ed] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ed == std::errc() && q == text.data() + text.size()) return Arg::ofFloat(d);
  return Arg::token(std::string(text));
}

std::uint64_t scalarElement(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e18)
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return mix64(bits);
}

std::vector<std::size_t> visibleOutputPositions(const Program& program) {
  std::vector<std::size_t> positions;
  const std::vector<OutputSpec>& specs = program.signature.outputs;
  std::size_t returned = program.graph.returnedArgs().size();
  for (std::size_t i = 0; i < returned; ++i)
    if (i >= specs.size() || specs[i].kind != OutputKind::BufferMutation) positions.push_back(i);
  return positions;
}

std::vector<bool> returnedAtVisiblePositions(const Program& program) {
  const Graph& g = program.graph;
  std::vector<bool> kept(g.nodes.size(), false);
  std::vector<Arg> returned = g.returnedValues();
  const std::vector<OutputSpec>& specs = program.signature.outputs;
  for (std::size_t p = 0; p < returned.size(); ++p) {
    if (p < specs.size() && isMutation(specs[p].kind)) continue;
    forEachRef(returned[p], [&](NodeId id) {
      if (id < kept.size()) kept[id] = true;
    });
  }
  return kept;
}

bool rebindsWrittenArgument(const Schema& schema, std::size_t k) {
  if (k >= schema.arguments.size() || !schema.isInplaceKind()) return true;
  for (const SchemaArgument& r : schema.returns)
    if (sameAliasSet(r.type.alias, schema.arguments[k].type.alias)) return false;
  return true;
}

namespace {

// A cheap hash for lookups (never for results): the length and the first and last eight bytes.
// Targets and node names differ there; a collision costs one string comparison.
[[gnu::always_inline]] inline std::uint64_t quickKey(std::string_view s) {
  std::uint64_t head = 0, tail = 0;
  if (s.size() >= 8) {
    std::memcpy(&head, s.data(), 8);
    std::memcpy(&tail, s.data() + s.size() - 8, 8);
  } else if (s.size() >= 4) {
    // Two fixed-size loads (overlapping when shorter than eight) rather than a loop over the
    // bytes: most node names are this short, and the key only has to be the same for the
    // same text (the length is mixed in below).
    std::uint32_t lo = 0, hi = 0;
    std::memcpy(&lo, s.data(), 4);
    std::memcpy(&hi, s.data() + s.size() - 4, 4);
    head = (std::uint64_t{hi} << 32) | lo;
  } else if (!s.empty()) {
    head = std::uint64_t{static_cast<unsigned char>(s[0])} | std::uint64_t{static_cast<unsigned char>(s[s.size() / 2])} << 8 |
           std::uint64_t{static_cast<unsigned char>(s.back())} << 16;
  }
  return mix64(head ^ mix64(tail + s.size()));
}

}  // namespace

OpCache::Entry OpCache::classified(const Node& node, const SchemaTable& schemas) const {
  Entry e;
  e.target = node.target;
  e.targetHash = hashName(node.target);
  e.positional = node.args.size();
  e.op = node.op;
  e.info = classify(node, schemas);
  if (e.info.schema) {
    const std::vector<SchemaArgument>& params = e.info.schema->arguments;
    e.defaults.reserve(params.size());
    e.positionalParams.reserve(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      const SchemaArgument& param = params[i];
      e.defaults.push_back(param.defaultValue ? parseDefault(*param.defaultValue) : Arg::none());
      if (!param.kwargOnly) e.positionalParams.push_back(static_cast<std::uint32_t>(i));
    }
  }
  e.table = schemas;
  e.validIn = use_;
  return e;
}

const OpCache::Entry& OpCache::get(const Node& node, const SchemaTable& schemas) {
  // quickKey's low bits are mixed already: the arity and op only need to move the key.
  const std::uint64_t key =
      quickKey(node.target) + 0x9e3779b97f4a7c15ULL * (node.args.size() * 8 + static_cast<std::uint64_t>(node.op));
  std::size_t mask = slots_.size() - 1;
  std::size_t h = key & mask;
  for (; !slots_.empty() && slots_[h].entry != 0; h = (h + 1) & mask) {
    if (slots_[h].key != key) continue;
    Entry& e = *entries_[slots_[h].entry - 1];
    if (e.op != node.op || e.positional != node.args.size() || e.target != node.target) continue;
    if (e.validIn != use_) revalidate(e, node, schemas);
    return e;
  }
  // Classified before anything changes, so an exception leaves the cache as it was.
  auto fresh = std::make_unique<Entry>(classified(node, schemas));
  std::vector<Slot> grown;
  if (2 * (entries_.size() + 1) > slots_.size()) grown.resize(std::max<std::size_t>(64, 2 * slots_.size()));
  // Room for a check's few dozen ops at once (a fresh cache per check is the common case).
  if (entries_.empty()) entries_.reserve(32);
  entries_.push_back(std::move(fresh));
  if (!grown.empty()) {  // rehash every entry, this one included
    mask = grown.size() - 1;
    for (const Slot& s : slots_)
      if (s.entry != 0) {
        std::size_t at = s.key & mask;
        while (grown[at].entry != 0) at = (at + 1) & mask;
        grown[at] = s;
      }
    h = key & mask;
    while (grown[h].entry != 0) h = (h + 1) & mask;
    slots_.swap(grown);
  }
  slots_[h] = Slot{key, static_cast<std::uint32_t>(entries_.size())};
  return *entries_.back();
}

void OpCache::revalidate(Entry& e, const Node& node, const SchemaTable& schemas) {
  // The entry's target from now on shares this node's text block: the other nodes of this
  // use (this program and its placed version share their targets' blocks) then compare
  // equal to it without reading characters.
  if (!e.target.sharesTextWith(node.target)) e.target = node.target;
  // Another use, perhaps another table: the classification holds if the target still finds
  // the same schema (classify() looks schemas up for calls other than getitem).
  const bool looksUp = node.op == NodeOp::CallFunction && !e.info.getitem;
  // find(), with the target's hash kept from the entry's first classification.
  const Schema* found = looksUp ? schemas.lookupHashed(node.target, e.targetHash, node.args.size()).schema : e.info.schema;
  if (found != e.info.schema) {
    // Each check's table is its own copy; an equal schema classifies alike (classify() reads
    // only the schema and the node's target), so only the pointer and the table that keeps it
    // alive change. The schemas it replaces stay known as equal ones.
    auto known = std::find_if(e.equalSchemas.begin(), e.equalSchemas.end(),
                              [&](const auto& other) { return other.first == found; });
    if (found && known != e.equalSchemas.end()) {
      std::swap(e.info.schema, known->first);
      std::swap(e.table, known->second);
    } else if (found && e.info.schema && *found == *e.info.schema) {
      if (e.equalSchemas.size() == kMaxEqualSchemas) e.equalSchemas.erase(e.equalSchemas.begin());  // the oldest
      e.equalSchemas.emplace_back(e.info.schema, std::move(e.table));
      e.info.schema = found;
      e.table = schemas;
    } else {
      e = classified(node, schemas);
    }
  }
  e.validIn = use_;
}

namespace {

// Fills argRefs[at] for `arg` (and, for a sequence, its items after the current end).
void fillRef(Analysis& a, std::size_t at, const Arg& arg) {
  ArgRef ref;
  ref.arg = &arg;
  if (arg.isRef()) {
    if (arg.node < a.nodes.size()) ref.node = arg.node;
  } else if (arg.isSequence()) {
    ref.itemsAt = static_cast<std::uint32_t>(a.argRefs.size());
    a.argRefs.resize(a.argRefs.size() + arg.items.size());
    for (std::size_t j = 0; j < arg.items.size(); ++j) fillRef(a, ref.itemsAt + j, arg.items[j]);
  }
  a.argRefs[at] = ref;
}

// The arguments of a call bound to its schema's positions, defaults filled in: false (with
// `why`) if they do not fit.
bool bindArguments(Analysis& a, NodeFacts& f, const Node& node, const OpCache::Entry& op, std::string& why) {
  const Schema& schema = *op.info.schema;
  const std::vector<SchemaArgument>& params = schema.arguments;
  if (node.args.size() > op.positionalParams.size()) {
    why = "too many positional arguments for " + schema.qualifiedName();
    return false;
  }
  const std::size_t at = a.boundArgs.size();
  a.boundArgs.resize(at + params.size());  // arg == nullptr: not set yet
  ArgRef* const bound = a.boundArgs.data() + at;
  for (std::size_t k = 0; k < node.args.size(); ++k) bound[op.positionalParams[k]] = a.argRefs[f.rawAt + k];
  std::size_t j = 0;
  for (const auto& [name, value] : node.kwargs) {
    std::optional<std::size_t> i = schema.argumentIndex(name);
    if (!i) {
      why = "unknown keyword argument '" + name + "' for " + schema.qualifiedName();
      return false;
    }
    bound[*i] = a.argRefs[f.kwAt + j++];
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (bound[i].arg) continue;
    // A call may leave out an argument that has a default or is optional.
    if (const SchemaArgument& param = params[i]; !param.defaultValue && !param.type.optional && !param.type.listOptional) {
      why = "missing argument '" + params[i].name + "' of " + schema.qualifiedName();
      return false;
    }
    bound[i] = ArgRef{};
    bound[i].arg = &op.defaults[i];  // the parsed default, or None
  }
  f.argsAt = static_cast<std::uint32_t>(at);
  f.argsCount = static_cast<std::uint32_t>(params.size());
  return true;
}

// The static shape of an annotation such as "f32[2, 8, 4]", appended to `out`, without
// building a TensorType: true if parsed. Anything else (symbols, odd spacing, no annotation)
// returns false and is left to Node::tensorType().
bool parseSimpleShape(std::string_view text, std::vector<std::int64_t>& out, std::uint32_t& rank) {
  std::size_t open = text.find('[');
  if (open == std::string_view::npos || open == 0 || text.back() != ']') return false;
  for (std::size_t i = 0; i < open; ++i) {
    char c = text[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  std::string_view body = text.substr(open + 1, text.size() - open - 2);
  const std::size_t start = out.size();
  rank = 0;
  if (body.empty()) return true;
  // One pass over the comma-separated sizes: each, between optional spaces, a decimal number
  // that fits an int64 (no sign), as std::from_chars would accept it whole; without the
  // find/from_chars calls per size (every node of every analysed program has an annotation).
  constexpr std::uint64_t kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const char* p = body.data();
  const char* const end = p + body.size();
  while (true) {
    while (p != end && *p == ' ') ++p;
    const char* const digits = p;
    std::uint64_t value = 0;
    bool fits = true;
    for (; p != end && *p >= '0' && *p <= '9'; ++p) {
      const std::uint64_t d = static_cast<std::uint64_t>(*p - '0');
      if (value > kMax / 10 || value * 10 > kMax - d) fits = false;
      else value = value * 10 + d;
    }
    const bool parsed = p != digits && fits;
    while (p != end && *p == ' ') ++p;
    if (!parsed || (p != end && *p != ',') || rank >= 64) {
      out.resize(start);
      return false;
    }
    out.push_back(static_cast<std::int64_t>(value));
    ++rank;
    if (p == end) return true;
    ++p;  // the comma
  }
}

void markRefs(Analysis& a, const ArgRef& r) {
  if (r.node != ArgRef::kNoNode) a.nodes[r.node].keptViewCopy = true;
  else if (r.arg->isSequence())
    for (const ArgRef& item : a.items(r)) markRefs(a, item);
}

}  // namespace

namespace {

// Points argRefs[at] (and its items) at `arg`, an argument equal to the one it was made for
// (see analyse's `like`).
void repoint(Analysis& a, std::size_t at, const Arg& arg) {
  ArgRef& ref = a.argRefs[at];
  ref.arg = &arg;
  if (arg.isSequence())
    for (std::size_t j = 0; j < arg.items.size(); ++j) repoint(a, ref.itemsAt + j, arg.items[j]);
}

// The facts of nodes [0, count) of a.program, equal one by one to those of like.program:
// like's, with their pools' leading ranges, pointed at a.program's own arguments. Getitem users
// and keptViewCopy are left to analyse() (later nodes and the output decide them).
void takeLeadingFacts(Analysis& a, const Analysis& like, std::size_t count) {
  const std::vector<Node>& nodes = a.program->graph.nodes;
  const std::size_t refsEnd = count < like.nodes.size() ? like.nodes[count].rawAt : like.argRefs.size();
  std::size_t boundEnd = 0, shapesEnd = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const NodeFacts& f = like.nodes[i];
    if (f.bound) boundEnd = std::max<std::size_t>(boundEnd, f.argsAt + f.argsCount);
    if (f.hasShape) shapesEnd = std::max<std::size_t>(shapesEnd, f.shapeAt + f.rank);
  }
  a.argRefs.assign(like.argRefs.begin(), like.argRefs.begin() + static_cast<std::ptrdiff_t>(refsEnd));
  a.boundArgs.assign(like.boundArgs.begin(), like.boundArgs.begin() + static_cast<std::ptrdiff_t>(boundEnd));
  a.shapes.assign(like.shapes.begin(), like.shapes.begin() + static_cast<std::ptrdiff_t>(shapesEnd));
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = nodes[i];
    NodeFacts& f = a.nodes[i];
    f = like.nodes[i];
    f.getitemUsers.clear();
    f.keptViewCopy = false;
    for (std::size_t k = 0; k < n.args.size(); ++k) repoint(a, f.rawAt + k, n.args[k]);
    std::size_t kw = f.kwAt;
    for (const auto& entry : n.kwargs) repoint(a, kw++, entry.second);
    if (!f.bound) continue;
    // A bound argument is a copy of one written (raw or keyword; found by the argument it
    // points at in `like`) or a schema default (in the op cache, shared: kept).
    for (ArgRef& b : std::span<ArgRef>(a.boundArgs.data() + f.argsAt, f.argsCount))
      for (std::size_t k = f.rawAt; k < f.kwAt + n.kwargs.size(); ++k)
        if (k < f.rawAt + f.rawCount || k >= f.kwAt)
          if (b.arg == like.argRefs[k].arg) {
            b = a.argRefs[k];
            break;
          }
  }
}

// Whether every reference of `mine` (an argument here) refers to the node matched to the one
// the reference in its place in `theirs` (like's) refers to.
bool refersToMatched(const Arg& mine, const Arg& theirs, const std::vector<std::uint32_t>& fromLike) {
  if (mine.isRef()) return theirs.node < fromLike.size() && fromLike[theirs.node] == mine.node;
  for (std::size_t k = 0; k < mine.items.size() && k < theirs.items.size(); ++k)
    if (!refersToMatched(mine.items[k], theirs.items[k], fromLike)) return false;
  return true;
}

// The facts of node i of a.program, equal to node j of like.program (sameNodeByName), taken
// from like's as takeLeadingFacts takes those of leading nodes, with the nodes its arguments
// refer to moved to this program's (`fromLike`: like's node -> this program's, for the nodes
// matched so far). False (nothing taken) if an argument refers to a node that is not the match
// of like's.
bool takeFactsOf(Analysis& a, const Analysis& like, std::size_t j, std::size_t i, const std::vector<std::uint32_t>& fromLike) {
  const NodeFacts& from = like.nodes[j];
  const Node& n = a.program->graph.nodes[i];
  const Node& theirs = like.program->graph.nodes[j];
  for (std::size_t k = 0; k < n.args.size(); ++k)
    if (!refersToMatched(n.args[k], theirs.args[k], fromLike)) return false;
  for (std::size_t k = 0; k < n.kwargs.size(); ++k)
    if (!refersToMatched(n.kwargs[k].second, theirs.kwargs[k].second, fromLike)) return false;
  // A node's arguments (raw, keyword, and the items of lists among them) are one range.
  const std::uint32_t begin = from.rawAt;
  const std::uint32_t end =
      j + 1 < like.nodes.size() ? like.nodes[j + 1].rawAt : static_cast<std::uint32_t>(like.argRefs.size());
  NodeFacts& f = a.nodes[i];
  f = from;
  f.getitemUsers.clear();
  f.keptViewCopy = false;
  const std::int64_t by = static_cast<std::int64_t>(a.argRefs.size()) - begin;
  a.argRefs.insert(a.argRefs.end(), like.argRefs.begin() + begin, like.argRefs.begin() + end);
  f.rawAt = static_cast<std::uint32_t>(f.rawAt + by);
  f.kwAt = static_cast<std::uint32_t>(f.kwAt + by);
  for (std::size_t k = begin + by; k < a.argRefs.size(); ++k) {
    ArgRef& r = a.argRefs[k];
    if (r.arg->isRef()) r.node = fromLike[r.node];
    else if (r.arg->isSequence()) r.itemsAt = static_cast<std::uint32_t>(r.itemsAt + by);
  }
  for (std::size_t k = 0; k < n.args.size(); ++k) repoint(a, f.rawAt + k, n.args[k]);
  std::size_t kw = f.kwAt;
  for (const auto& entry : n.kwargs) repoint(a, kw++, entry.second);
  if (f.bound) {
    // A bound argument is a copy of one written (found by the argument it points at in
    // `like`) or a schema default (in the op cache, shared: kept).
    f.argsAt = static_cast<std::uint32_t>(a.boundArgs.size());
    a.boundArgs.insert(a.boundArgs.end(), like.boundArgs.begin() + from.argsAt,
                       like.boundArgs.begin() + from.argsAt + from.argsCount);
    for (ArgRef& b : std::span<ArgRef>(a.boundArgs.data() + f.argsAt, f.argsCount))
      for (std::uint32_t k = begin; k < end; ++k)
        if (b.arg == like.argRefs[k].arg) {
          b = a.argRefs[static_cast<std::size_t>(k + by)];
          break;
        }
  }
  if (f.hasShape) {
    f.shapeAt = static_cast<std::uint32_t>(a.shapes.size());
    a.shapes.insert(a.shapes.end(), like.shapes.begin() + from.shapeAt, like.shapes.begin() + from.shapeAt + from.rank);
  }
  return true;
}

}  // namespace

Analysis analyse(const Program& program, const SchemaTable& schemas, std::shared_ptr<OpCache> cache,
                 const Analysis* like) {
  const Graph& g = program.graph;
  // The nodes as a span: its size and data stay in registers across the loops, where the
  // vector's would be read again after every store that might alias them.
  const std::span<const Node> nodes(g.nodes);
  Analysis a;
  a.program = &program;
  a.ops = cache ? std::move(cache) : std::make_shared<OpCache>();
  a.nodes.resize(nodes.size());
  a.argRefs.reserve(4 * nodes.size());
  a.boundArgs.reserve(4 * nodes.size());
  a.shapes.reserve(3 * nodes.size());
  std::size_t taken = 0;  // leading nodes equal to like's, whose facts are like's
  // After them, a node equal to like's next unmatched one takes its facts too (a placed
  // program is its program with copies inserted: most of its later nodes are the program's).
  std::vector<std::uint32_t> fromLike;  // like's node -> the node here it matched
  std::size_t likeNext = 0;
  if (like) {
    const std::span<const Node> other(like->program->graph.nodes);
    while (taken < nodes.size() && taken < other.size() && nodes[taken] == other[taken]) ++taken;
    takeLeadingFacts(a, *like, taken);
    a.likeProgram = like->program;
    a.equalLeadingNodes = taken;
    fromLike.assign(other.size(), ArgRef::kNoNode);
    a.likeNodes.assign(nodes.size(), ArgRef::kNoNode);
    for (std::size_t k = 0; k < taken; ++k) fromLike[k] = a.likeNodes[k] = static_cast<std::uint32_t>(k);
    likeNext = taken;
  }
  std::optional<std::size_t> lastShaped;  // the last node here whose static shape was read
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    NodeFacts& f = a.nodes[i];
    bool fromFacts = i < taken;  // facts taken from like's (the leading ones are already)
    if (!fromFacts && like && likeNext < like->nodes.size() &&
        sameNodeText(n, g, like->program->graph.nodes[likeNext], like->program->graph)) {
      fromFacts = takeFactsOf(a, *like, likeNext, i, fromLike);
      a.likeNodes[i] = static_cast<std::uint32_t>(likeNext);
      fromLike[likeNext++] = static_cast<std::uint32_t>(i);
    }
    if (fromFacts) {
      if (f.info.getitem && !n.args.empty() && n.args[0].isRef())
        if (std::uint32_t c = a.argRefs[f.rawAt].node; c != ArgRef::kNoNode) a.nodes[c].getitemUsers.push_back(i);
      continue;
    }
    f.rawAt = static_cast<std::uint32_t>(a.argRefs.size());
    f.rawCount = static_cast<std::uint32_t>(n.args.size());
    a.argRefs.resize(a.argRefs.size() + n.args.size());
    for (std::size_t k = 0; k < n.args.size(); ++k) fillRef(a, f.rawAt + k, n.args[k]);
    f.kwAt = static_cast<std::uint32_t>(a.argRefs.size());
    a.argRefs.resize(a.argRefs.size() + n.kwargs.size());
    {
      std::size_t k = f.kwAt;
      for (const auto& kw : n.kwargs) fillRef(a, k++, kw.second);
    }
    if (n.op == NodeOp::CallFunction || n.op == NodeOp::CallModule) {
      const OpCache::Entry& op = a.ops->get(n, schemas);
      f.info = op.info;
      if (f.info.schema) f.bound = bindArguments(a, f, n, op, f.bindError);
      if (f.info.getitem && !n.args.empty() && n.args[0].isRef())
        if (std::uint32_t c = a.argRefs[f.rawAt].node; c != ArgRef::kNoNode) a.nodes[c].getitemUsers.push_back(i);
    }
    if (!n.typeText.empty() && lastShaped && n.typeText == nodes[*lastShaped].typeText) {
      // Chains of ops keep their shape: the same annotation as the last static one read, whose
      // sizes this node shares (the pool is read only).
      f.hasShape = true;
      f.shapeAt = a.nodes[*lastShaped].shapeAt;
      f.rank = a.nodes[*lastShaped].rank;
    } else if (!n.typeText.empty()) {
      f.shapeAt = static_cast<std::uint32_t>(a.shapes.size());
      if (parseSimpleShape(n.typeText, a.shapes, f.rank)) {
        f.hasShape = true;
      } else if (std::optional<TensorType> type = n.tensorType(); type && type->isStatic()) {
        f.hasShape = true;
        f.rank = static_cast<std::uint32_t>(type->shape.size());
        for (const Dim& d : type->shape) a.shapes.push_back(d.size);
      }
      if (f.hasShape) lastShaped = i;
    }
    if (!n.meta.empty()) f.shareAllocArgIndex = n.shareAllocArgIndex();
  }
  if (const Node* out = g.outputNode(); out && !out->args.empty()) {
    const ArgRef& r = a.argRefs[a.nodes.back().rawAt];
    a.returnedAt = r.arg->isSequence() ? r.itemsAt : a.nodes.back().rawAt;
    a.returnedCount = static_cast<std::uint32_t>(r.arg->isSequence() ? r.arg->items.size() : 1);
  }
  const Signature& sig = program.signature;
  a.visibleOutputs.reserve(a.returnedCount);
  for (std::size_t p = 0; p < a.returnedCount; ++p) {
    const bool mutation = p < sig.outputs.size() && isMutation(sig.outputs[p].kind);
    if (p >= sig.outputs.size() || sig.outputs[p].kind != OutputKind::BufferMutation) a.visibleOutputs.push_back(p);
    if (mutation) continue;
    markRefs(a, a.argRefs[a.returnedAt + p]);
  }
  // Input spec k names placeholder k in a valid program; the others are searched.
  a.mutatedPlaceholder.resize(sig.outputs.size());
  for (std::size_t p = 0; p < sig.outputs.size(); ++p)
    if (const InputSpec* in = sig.mutatedInput(sig.outputs[p])) {
      const std::size_t k = static_cast<std::size_t>(in - sig.inputs.data());
      if (k < nodes.size() && nodes[k].isPlaceholder() && sameName(nodes[k].name, in->name)) {
        a.mutatedPlaceholder[p] = k;
        continue;
      }
      for (std::size_t i = 0; i < nodes.size(); ++i)
        if (sameName(nodes[i].name, in->name)) {
          a.mutatedPlaceholder[p] = i;
          break;
        }
    }
  return a;
}

std::size_t sharedPrefix(const Analysis& a, const Analysis& b) {
  const std::vector<Node>& x = a.program->graph.nodes;
  const std::vector<Node>& y = b.program->graph.nodes;
  std::size_t k = 0;
  if (b.likeProgram == a.program) k = b.equalLeadingNodes;  // counted when b was made
  else
    while (k < x.size() && k < y.size() && x[k] == y[k]) ++k;
  for (std::size_t i = 0; i < k; ++i) {
    const NodeFacts &f = a.nodes[i], &g = b.nodes[i];
    bool same = f.keptViewCopy == g.keptViewCopy && f.getitemUsers == g.getitemUsers;
    for (std::size_t u : f.getitemUsers) same = same && u < x.size() && u < y.size() && x[u] == y[u];
    if (!same) return i;
  }
  return k;
}

}  // namespace wb::oracle::detail

namespace wb::oracle {

SchemaTable withOracleSchemas(const SchemaTable& base) {
  // Ops the oracle interprets that the built-in table may not declare. Verbatim ATen schemas.
  static constexpr std::string_view kSupplement =
      "aten::neg(Tensor self) -> Tensor\n"
      "aten::neg_(Tensor(a!) self) -> Tensor(a!)\n"
      "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
      "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)\n"
      "aten::sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)\n"
      "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
      "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor\n"
      "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor\n"
      "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor\n"
      "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor\n"
      "aten::index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out) -> Tensor(a!)\n"
      "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor\n"
      "aten::scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)\n"
      "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor\n"
      "aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)\n"
      "aten::fill.Scalar(Tensor self, Scalar value) -> Tensor\n"
      "aten::zero(Tensor self) -> Tensor\n"
      "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor\n"
      "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor\n"
      "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor\n"
      "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n"
      "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n"
      "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n"
      "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor\n"
      "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor\n"
      "aten::t(Tensor(a) self) -> Tensor(a)\n"
      "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)\n"
      "aten::squeeze(Tensor(a) self) -> Tensor(a)\n"
      "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)\n"
      "aten::squeeze_copy(Tensor self) -> Tensor\n"
      "aten::squeeze_copy.dims(Tensor self, int[] dim) -> Tensor\n"
      "aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor\n"
      "aten::diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor\n"
      "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)\n"
      "aten::alias(Tensor(a) self) -> Tensor(a)\n"
      "aten::lift_fresh(Tensor(a) self) -> Tensor(a)\n"
      "aten::_foreach_sub_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()\n"
      "aten::_foreach_mul_.List(Tensor(a!)[] self, Tensor[] other) -> ()\n"
      "aten::_foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]\n";
  SchemaTable supplement;
  supplement.addAll(kSupplement, "oracle/ops.cpp");
  SchemaTable merged = base;
  for (const Schema* schema : supplement.all())
    if (!merged.contains(schema->qualifiedName())) merged.add(*schema);
  return merged;
}

}  // namespace wb::oracle
