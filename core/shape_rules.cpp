// core/shape_rules.cpp: the shape rules of the known ops and the annotation check (see
// shape_rules.h).
//
// Linear in the graph: each annotation is parsed at most once (into one pool of dimensions),
// each op's rule is looked up once per distinct target text, and a node without an annotation
// or a rule costs a lookup.
#include "core/shape_rules.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <utility>
#include <vector>

namespace wb {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<StaticShape> parseStaticShape(std::string_view text) {
  text = trim(text);
  const std::size_t open = text.find('[');
  if (open == std::string_view::npos || open == 0 || text.back() != ']') return std::nullopt;
  for (char c : text.substr(0, open))
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return std::nullopt;
  std::string_view body = trim(text.substr(open + 1, text.size() - open - 2));
  StaticShape shape;
  if (body.empty()) return shape;
  while (true) {
    const std::size_t comma = body.find(',');
    const std::string_view part = trim(body.substr(0, comma));
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || value < 0 || !shape.push(value))
      return std::nullopt;
    if (comma == std::string_view::npos) break;
    body = body.substr(comma + 1);
  }
  return shape;
}

std::string formatShape(std::span<const std::int64_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::optional<std::size_t> wrapDim(std::int64_t dim, std::size_t rank) {
  const std::int64_t r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
  if (dim < -r || dim >= r) return std::nullopt;
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

std::optional<std::int64_t> broadcastDim(std::int64_t a, std::int64_t b) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  return std::nullopt;
}

SliceBounds sliceBounds(std::int64_t size, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                        std::int64_t step) {
  std::int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<std::int64_t>(s, 0, size);
  e = std::clamp<std::int64_t>(e, s, size);
  return {s, (e - s + step - 1) / step};
}

const char* inferViewSizes(std::span<std::int64_t> sizes, std::int64_t numel) {
  std::int64_t known = 1;
  std::optional<std::size_t> infer;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer) return "two -1 sizes";
      infer = i;
    } else if (sizes[i] < 0) {
      return "a negative size";
    } else {
      known *= sizes[i];
    }
  }
  if (infer) {
    if (known == 0 || numel % known != 0) return "no size for -1 gives the same number of elements";
    sizes[*infer] = numel / known;
    known = numel;
  }
  if (known != numel) return "the number of elements differs";
  return nullptr;
}

namespace {

// What a rule needs of an op, found once per target text.
enum class Rule : std::uint8_t {
  None,         // no rule: not checked
  Unary,        // the result has self's shape
  Pointwise,    // the tensor arguments broadcast (in place: to self's shape)
  Copy,         // copy_(self, src): src broadcasts to self
  SameAsSelf,   // index_put, index_add, scatter, ...: self's shape
  IndexCopy,    // index_copy(self, dim, index, source): self; source fits the index
  SliceScatter, // slice_scatter(self, src, dim, start, end, step): self; src is the slice
  SelectScatter,
  View,         // view(self, size), reshape, _unsafe_view
  Select,
  Slice,
  Narrow,
  Transpose,
  T,
  Permute,
  Expand,
  ExpandAs,
  Unsqueeze,
  Squeeze,      // squeeze(), squeeze.dim, squeeze.dims
  AsStrided,
  Reduction,    // sum, mean: dim (None or [] reduces all), keepdim
  Cat,
  Stack,
  IndexSelect,
  Mm,
  Bmm,
  Factory,      // full(size, ...), zeros(size), ones(size)
  FactoryLike,  // zeros_like(self), ...
  Attention,    // scaled_dot_product_attention(q, k, v): q's shape with v's last dim
  ListView,     // split, split_with_sizes, chunk, unbind: each part checked at its getitem
  Getitem,
};

struct OpRule {
  Rule rule = Rule::None;
  bool inplace = false;
  std::string_view target;  // as printed in messages
};

struct NamedRule {
  std::string_view base;
  Rule rule;
};

// Functional base names (an in-place `_` and a view's `_copy` stripped first).
constexpr NamedRule kRuleList[] = {
    {"relu", Rule::Unary}, {"sigmoid", Rule::Unary}, {"gelu", Rule::Unary}, {"silu", Rule::Unary},
    {"tanh", Rule::Unary}, {"rsqrt", Rule::Unary}, {"sqrt", Rule::Unary}, {"neg", Rule::Unary},
    {"abs", Rule::Unary}, {"exp", Rule::Unary}, {"log", Rule::Unary}, {"sin", Rule::Unary},
    {"cos", Rule::Unary}, {"reciprocal", Rule::Unary}, {"hardtanh", Rule::Unary},
    {"clone", Rule::Unary}, {"_clone_dim_order", Rule::Unary}, {"_to_copy", Rule::Unary},
    {"_to_dim_order_copy", Rule::Unary}, {"lift_fresh_copy", Rule::Unary}, {"detach", Rule::Unary},
    {"contiguous", Rule::Unary}, {"alias", Rule::Unary}, {"cumsum", Rule::Unary},
    {"_softmax", Rule::Unary}, {"softmax", Rule::Unary}, {"_log_softmax", Rule::Unary},
    {"log_softmax", Rule::Unary}, {"fill", Rule::Unary}, {"zero", Rule::Unary},
    {"add", Rule::Pointwise}, {"sub", Rule::Pointwise}, {"mul", Rule::Pointwise}, {"div", Rule::Pointwise},
    {"rsub", Rule::Pointwise}, {"pow", Rule::Pointwise}, {"maximum", Rule::Pointwise},
    {"minimum", Rule::Pointwise}, {"where", Rule::Pointwise}, {"masked_fill", Rule::Pointwise},
    {"eq", Rule::Pointwise}, {"ne", Rule::Pointwise}, {"lt", Rule::Pointwise}, {"le", Rule::Pointwise},
    {"gt", Rule::Pointwise}, {"ge", Rule::Pointwise},
    {"copy", Rule::Copy},
    {"index_put", Rule::SameAsSelf}, {"_index_put_impl", Rule::SameAsSelf}, {"index_add", Rule::SameAsSelf},
    {"scatter", Rule::SameAsSelf}, {"scatter_add", Rule::SameAsSelf},
    {"index_copy", Rule::IndexCopy}, {"slice_scatter", Rule::SliceScatter}, {"select_scatter", Rule::SelectScatter},
    {"view", Rule::View}, {"reshape", Rule::View}, {"_unsafe_view", Rule::View},
    {"select", Rule::Select}, {"slice", Rule::Slice}, {"narrow", Rule::Narrow},
    {"transpose", Rule::Transpose}, {"t", Rule::T}, {"permute", Rule::Permute},
    {"expand", Rule::Expand}, {"broadcast_to", Rule::Expand}, {"expand_as", Rule::ExpandAs},
    {"unsqueeze", Rule::Unsqueeze}, {"squeeze", Rule::Squeeze}, {"as_strided", Rule::AsStrided},
    {"sum", Rule::Reduction}, {"mean", Rule::Reduction},
    {"cat", Rule::Cat}, {"stack", Rule::Stack}, {"index_select", Rule::IndexSelect},
    {"mm", Rule::Mm}, {"bmm", Rule::Bmm},
    {"full", Rule::Factory}, {"zeros", Rule::Factory}, {"ones", Rule::Factory},
    {"zeros_like", Rule::FactoryLike}, {"ones_like", Rule::FactoryLike}, {"full_like", Rule::FactoryLike},
    {"scaled_dot_product_attention", Rule::Attention},
    {"split", Rule::ListView}, {"split_with_sizes", Rule::ListView}, {"chunk", Rule::ListView},
    {"unbind", Rule::ListView},
};

// kRuleList sorted by base name, for a binary search: ruleOf runs for every distinct target of
// every graph validated, and a linear scan of the list was most of it.
constexpr auto kRules = [] {
  std::array<NamedRule, std::size(kRuleList)> sorted{};
  std::copy(std::begin(kRuleList), std::end(kRuleList), sorted.begin());
  std::sort(sorted.begin(), sorted.end(), [](const NamedRule& a, const NamedRule& b) { return a.base < b.base; });
  return sorted;
}();
static_assert(std::adjacent_find(kRules.begin(), kRules.end(),
                                 [](const NamedRule& a, const NamedRule& b) { return a.base == b.base; }) == kRules.end(),
              "a base name with two rules");

// The views whose `*_copy` variants share their rule.
constexpr std::string_view kCopyVariantViews[] = {
    "view", "slice", "select", "permute", "expand", "transpose", "t", "unsqueeze", "squeeze",
    "split", "split_with_sizes", "unbind", "alias", "as_strided", "narrow"};

OpRule ruleOf(const Node& node) {
  OpRule r;
  r.target = node.target.str();
  if (node.op != NodeOp::CallFunction) return r;
  std::string_view t = r.target;
  if (t == "operator.getitem") {
    r.rule = Rule::Getitem;
    return r;
  }
  const std::size_t colons = t.find("::");
  if (colons == std::string_view::npos) return r;
  const std::string_view ns = t.substr(0, colons);
  if (ns != "aten" && ns != "dim_order_ops") return r;  // custom ops: their shapes are theirs
  std::string_view base = t.substr(colons + 2), overload;
  if (std::size_t dot = base.find('.'); dot != std::string_view::npos) {
    overload = base.substr(dot + 1);
    base = base.substr(0, dot);
  }
  if (overload == "out" || overload.ends_with("_out") || overload.starts_with("out")) return r;  // out= variants
  if (base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_') {
    r.inplace = true;
    base.remove_suffix(1);
  }
  if (base.ends_with("_copy")) {
    const std::string_view viewName = base.substr(0, base.size() - 5);
    for (std::string_view v : kCopyVariantViews)
      if (v == viewName) base = viewName;
  }
  const auto* named = std::lower_bound(kRules.begin(), kRules.end(), base,
                                       [](const NamedRule& n, std::string_view b) { return n.base < b; });
  if (named != kRules.end() && named->base == base) r.rule = named->rule;
  // In-place views (transpose_, unsqueeze_) change the self's metadata: no rule here.
  if (r.inplace && r.rule >= Rule::View && r.rule != Rule::SameAsSelf) r.rule = Rule::None;
  return r;
}

// Why a node is not checked further: its shape is unknown (not a contradiction).
struct Unknown {};

class ShapeChecker {
 public:
  explicit ShapeChecker(const Graph& graph) : graph_(graph), state_(graph.nodes.size(), kUnparsed), at_(graph.nodes.size()) {
    pool_.reserve(2 * graph.nodes.size());  // most annotations have rank 2 or less: one allocation
  }

  std::vector<ShapeContradiction> run() {
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      if (node.op != NodeOp::CallFunction) continue;
      const OpRule rule = ruleFor(node);
      if (rule.rule == Rule::None || rule.rule == Rule::ListView) continue;
      // An in-place op writes its self: a constant there has no storage to write, and an
      // analysis would find no value for the op's result to alias.
      if (rule.inplace && (node.args.empty() || !node.args[0].isRef())) {
        found_.push_back({static_cast<NodeId>(i), std::string(rule.target) +
                                                      ": writes in place into argument 0, which is not a value of the graph"});
        continue;
      }
      if (node.typeText.empty()) continue;
      // Most getitems take an item of an op's tuple of results (max.dim, native_layer_norm),
      // not a part of a split: unknown, and cheaper to say so here than by throwing Unknown.
      if (rule.rule == Rule::Getitem && splitOf(node) == nullptr) continue;
      const std::optional<StaticShape> annotated = shapeOf(static_cast<NodeId>(i));
      if (!annotated) continue;
      current_ = i;
      currentRule_ = &rule;
      try {
        StaticShape expected = resultShape(node, rule);
        if (!(expected == *annotated))
          found_.push_back({static_cast<NodeId>(i), "annotated " + node.typeText + ", but " + std::string(rule.target) +
                                                       " gives " + formatShape(expected.view()) + " here"});
      } catch (const Unknown&) {
      } catch (const ShapeContradiction& c) {
        found_.push_back(c);
      }
    }
    return std::move(found_);
  }

 private:
  static constexpr std::uint8_t kUnparsed = 0xff, kNotStatic = 0xfe;

  // The rule of a node's target, worked out once per target text block (a program has few),
  // kept sorted by the block's address: a look-up is a binary search, and a program of a few
  // targets makes one allocation for them all.
  OpRule ruleFor(const Node& node) {
    const std::string* key = &node.target.str();
    if (key == lastKey_) return lastRule_;
    if (rules_.empty()) rules_.reserve(16);
    auto it = std::lower_bound(rules_.begin(), rules_.end(), key,
                               [](const std::pair<const std::string*, OpRule>& r, const std::string* k) {
                                 return std::less<const std::string*>()(r.first, k);
                               });
    if (it == rules_.end() || it->first != key) it = rules_.insert(it, {key, ruleOf(node)});
    lastKey_ = key;
    lastRule_ = it->second;
    return lastRule_;
  }

  // The static shape of node `id`'s annotation, parsed once.
  std::optional<StaticShape> shapeOf(NodeId id) {
    std::uint8_t& state = state_[id];
    if (state == kUnparsed) {
      std::optional<StaticShape> s = parseStaticShape(graph_.nodes[id].typeText);
      if (!s) {
        state = kNotStatic;
        return std::nullopt;
      }
      at_[id] = static_cast<std::uint32_t>(pool_.size());
      pool_.insert(pool_.end(), s->dims.begin(), s->dims.begin() + static_cast<std::ptrdiff_t>(s->rank));
      state = static_cast<std::uint8_t>(s->rank);
      return s;
    }
    if (state == kNotStatic) return std::nullopt;
    StaticShape s;
    s.rank = state;
    std::copy_n(pool_.begin() + at_[id], state, s.dims.begin());
    return s;
  }

  [[noreturn]] void contradiction(std::string message) const {
    throw ShapeContradiction{static_cast<NodeId>(current_), std::string(currentRule_->target) + ": " + std::move(message)};
  }

  // --- Arguments ----------------------------------------------------------------------------

  // The argument at schema position `pos` or keyword `name`; nullptr when not given.
  static const Arg* param(const Node& node, std::size_t pos, std::string_view name) {
    if (pos < node.args.size()) return &node.args[pos];
    for (const auto& [key, value] : node.kwargs)
      if (key == name) return &value;
    return nullptr;
  }

  StaticShape tensor(const Arg* arg) {
    if (!arg || !arg->isRef()) throw Unknown{};
    std::optional<StaticShape> s = shapeOf(arg->node);
    if (!s) throw Unknown{};
    return *s;
  }
  StaticShape tensor(const Node& node, std::size_t pos, std::string_view name) { return tensor(param(node, pos, name)); }

  static std::int64_t integer(const Arg* arg) {
    if (!arg || arg->kind != Arg::Kind::Int) throw Unknown{};
    return arg->integer;
  }
  static std::int64_t integer(const Node& node, std::size_t pos, std::string_view name, std::optional<std::int64_t> fallback = {}) {
    const Arg* a = param(node, pos, name);
    if ((!a || a->kind == Arg::Kind::None) && fallback) return *fallback;
    return integer(a);
  }
  static std::optional<std::int64_t> optionalInteger(const Node& node, std::size_t pos, std::string_view name) {
    const Arg* a = param(node, pos, name);
    if (!a || a->kind == Arg::Kind::None) return std::nullopt;
    return integer(a);
  }
  // An int[] argument: a list of literal integers (a single integer for `int[1]`).
  static StaticShape integers(const Arg* arg) {
    if (!arg) throw Unknown{};
    StaticShape out;
    if (arg->kind == Arg::Kind::Int) {
      out.push(arg->integer);
      return out;
    }
    if (!arg->isSequence()) throw Unknown{};
    for (const Arg& item : arg->items)
      if (!out.push(integer(&item))) throw Unknown{};
    return out;
  }

  std::size_t dim(std::int64_t d, std::size_t rank) const {
    std::optional<std::size_t> w = wrapDim(d, rank);
    if (!w) contradiction("dimension " + std::to_string(d) + " is out of range for a " + std::to_string(rank) + "-d tensor");
    return *w;
  }

  StaticShape broadcast(const StaticShape& a, const StaticShape& b) const {
    StaticShape out;
    out.rank = std::max(a.rank, b.rank);
    for (std::size_t i = 0; i < out.rank; ++i) {
      const std::int64_t x = i < out.rank - a.rank ? 1 : a.dims[i - (out.rank - a.rank)];
      const std::int64_t y = i < out.rank - b.rank ? 1 : b.dims[i - (out.rank - b.rank)];
      std::optional<std::int64_t> d = broadcastDim(x, y);
      if (!d) contradiction("shapes " + formatShape(a.view()) + " and " + formatShape(b.view()) + " do not broadcast");
      out.dims[i] = *d;
    }
    return out;
  }

  // Calls f(shape) for each tensor among the top-level arguments (positional and keyword), in
  // order; unknown if an argument refers to a node whose annotation is no static tensor shape
  // (a SymInt, a missing one). No list of them is built: a pointwise node is most nodes.
  template <typename F>
  void forEachTensorArgument(const Node& node, F&& f) {
    auto take = [&](const Arg& a) {
      if (a.isRef()) f(tensor(&a));
      else if (a.isSequence())
        for (const Arg& item : a.items)
          if (item.isRef()) throw Unknown{};  // a list of tensors in a pointwise op: not known here
    };
    for (const Arg& a : node.args) take(a);
    for (const auto& kw : node.kwargs) take(kw.second);
  }

  // --- The rules ----------------------------------------------------------------------------

  StaticShape resultShape(const Node& node, const OpRule& rule) {
    switch (rule.rule) {
      case Rule::Unary:
      case Rule::SameAsSelf:
      case Rule::FactoryLike: return tensor(node, 0, "self");
      case Rule::Pointwise: {
        // In place, every other tensor must broadcast to the self's shape, which is the result;
        // otherwise the result is the broadcast of them all. A contradiction counts only when
        // every tensor argument is known, hence a first pass that only asks for them.
        forEachTensorArgument(node, [](const StaticShape&) {});
        std::optional<StaticShape> out;
        forEachTensorArgument(node, [&](const StaticShape& shape) {
          if (!out) out = shape;
          else if (!rule.inplace) out = broadcast(*out, shape);
          else if (!(broadcast(*out, shape) == *out))
            contradiction("an argument of shape " + formatShape(shape.view()) + " does not broadcast to the self's " +
                          formatShape(out->view()));
        });
        if (!out) throw Unknown{};
        return *out;
      }
      case Rule::Copy: {
        StaticShape self = tensor(node, 0, "self"), src = tensor(node, 1, "src");
        if (!(broadcast(self, src) == self))
          contradiction("src of shape " + formatShape(src.view()) + " does not broadcast to the self's " + formatShape(self.view()));
        return self;
      }
      case Rule::IndexCopy: {
        StaticShape self = tensor(node, 0, "self");
        const std::size_t d = dim(integer(node, 1, "dim"), self.rank);
        StaticShape index = tensor(node, 2, "index"), source = tensor(node, 3, "source");
        if (index.rank > 1) contradiction("the index must be 0-d or 1-d, is " + formatShape(index.view()));
        StaticShape expected = self;
        if (expected.rank > 0) expected.dims[d] = index.rank == 0 ? 1 : index.dims[0];
        if (!(source == expected) && !(self.rank == 0 && source.rank == 0))
          contradiction("source of shape " + formatShape(source.view()) + " does not fit the index (expected " +
                        formatShape(expected.view()) + ")");
        return self;
      }
      case Rule::SliceScatter: {
        StaticShape self = tensor(node, 0, "self"), src = tensor(node, 1, "src");
        StaticShape expected = sliced(self, integer(node, 2, "dim", 0), optionalInteger(node, 3, "start"),
                                      optionalInteger(node, 4, "end"), integer(node, 5, "step", 1));
        if (!(src == expected))
          contradiction("src of shape " + formatShape(src.view()) + " is not the slice's shape " + formatShape(expected.view()));
        return self;
      }
      case Rule::SelectScatter: {
        StaticShape self = tensor(node, 0, "self"), src = tensor(node, 1, "src");
        StaticShape expected = selected(self, integer(node, 2, "dim"), integer(node, 3, "index"));
        if (!(src == expected))
          contradiction("src of shape " + formatShape(src.view()) + " is not the selection's shape " + formatShape(expected.view()));
        return self;
      }
      case Rule::View: {
        StaticShape self = tensor(node, 0, "self");
        const Arg* size = param(node, 1, "size");
        StaticShape sizes = integers(size ? size : param(node, 1, "shape"));
        std::int64_t numel = 1;
        for (std::size_t i = 0; i < self.rank; ++i) numel *= self.dims[i];
        if (const char* why = inferViewSizes({sizes.dims.data(), sizes.rank}, numel))
          contradiction("cannot view " + formatShape(self.view()) + " as " + formatShape(sizes.view()) + " (" + why + ")");
        return sizes;
      }
      case Rule::Select: return selected(tensor(node, 0, "self"), integer(node, 1, "dim"), integer(node, 2, "index"));
      case Rule::Slice:
        return sliced(tensor(node, 0, "self"), integer(node, 1, "dim", 0), optionalInteger(node, 2, "start"),
                      optionalInteger(node, 3, "end"), integer(node, 4, "step", 1));
      case Rule::Narrow: {
        StaticShape self = tensor(node, 0, "self");
        if (self.rank == 0) contradiction("narrow of a 0-d tensor");
        const std::size_t d = dim(integer(node, 1, "dim"), self.rank);
        std::int64_t start = integer(node, 2, "start");
        const std::int64_t length = integer(node, 3, "length");
        if (start < 0) start += self.dims[d];
        if (start < 0 || length < 0 || start + length > self.dims[d])
          contradiction("narrow(" + std::to_string(start) + ", " + std::to_string(length) + ") is out of range for size " +
                        std::to_string(self.dims[d]));
        self.dims[d] = length;
        return self;
      }
      case Rule::Transpose: {
        StaticShape self = tensor(node, 0, "self");
        const std::size_t a = dim(integer(node, 1, "dim0"), self.rank), b = dim(integer(node, 2, "dim1"), self.rank);
        if (self.rank > 0) std::swap(self.dims[a], self.dims[b]);
        return self;
      }
      case Rule::T: {
        StaticShape self = tensor(node, 0, "self");
        if (self.rank > 2) contradiction("t() of a " + std::to_string(self.rank) + "-d tensor (at most 2-d)");
        if (self.rank == 2) std::swap(self.dims[0], self.dims[1]);
        return self;
      }
      case Rule::Permute: {
        StaticShape self = tensor(node, 0, "self"), dims = integers(param(node, 1, "dims"));
        if (dims.rank != self.rank)
          contradiction("permute of a " + std::to_string(self.rank) + "-d tensor by " + std::to_string(dims.rank) + " dims");
        StaticShape out = self;
        std::array<bool, StaticShape::kMaxRank> seen{};
        for (std::size_t i = 0; i < dims.rank; ++i) {
          const std::size_t d = dim(dims.dims[i], self.rank);
          if (seen[d]) contradiction("permute repeats dimension " + std::to_string(d));
          seen[d] = true;
          out.dims[i] = self.dims[d];
        }
        return out;
      }
      case Rule::Expand: return expanded(tensor(node, 0, "self"), integers(param(node, 1, "size")));
      case Rule::ExpandAs: return expanded(tensor(node, 0, "self"), tensor(node, 1, "other"));
      case Rule::Unsqueeze: {
        StaticShape self = tensor(node, 0, "self");
        std::int64_t d = integer(node, 1, "dim");
        const std::int64_t r = static_cast<std::int64_t>(self.rank);
        if (d < -r - 1 || d > r) contradiction("unsqueeze dimension " + std::to_string(d) + " is out of range for a " + std::to_string(r) + "-d tensor");
        if (d < 0) d += r + 1;
        StaticShape out;
        for (std::size_t i = 0; i <= self.rank; ++i) {
          if (static_cast<std::int64_t>(i) == d && !out.push(1)) throw Unknown{};
          if (i < self.rank) out.push(self.dims[i]);
        }
        return out;
      }
      case Rule::Squeeze: {
        StaticShape self = tensor(node, 0, "self");
        std::array<bool, StaticShape::kMaxRank> drop{};
        if (const Arg* dims = param(node, 1, "dim")) {
          StaticShape list = integers(dims);
          for (std::size_t i = 0; i < list.rank; ++i) {
            const std::size_t d = dim(list.dims[i], self.rank);
            if (self.rank > 0) drop[d] = self.dims[d] == 1;
          }
        } else {
          for (std::size_t d = 0; d < self.rank; ++d) drop[d] = self.dims[d] == 1;
        }
        StaticShape out;
        for (std::size_t d = 0; d < self.rank; ++d)
          if (!drop[d]) out.push(self.dims[d]);
        return out;
      }
      case Rule::AsStrided: {
        StaticShape sizes = integers(param(node, 1, "size")), strides = integers(param(node, 2, "stride"));
        if (sizes.rank != strides.rank)
          contradiction("as_strided with " + std::to_string(sizes.rank) + " sizes and " + std::to_string(strides.rank) + " strides");
        for (std::size_t i = 0; i < sizes.rank; ++i)
          if (sizes.dims[i] < 0) contradiction("as_strided with a negative size");
        return sizes;
      }
      case Rule::Reduction: {
        StaticShape self = tensor(node, 0, "self");
        std::array<bool, StaticShape::kMaxRank> reduce{};
        reduce.fill(true);
        const Arg* dims = param(node, 1, "dim");
        // sum(self, *, dtype) has no dim: its second positional argument is no dim list.
        if (dims && dims->kind != Arg::Kind::None && !(dims->isSequence() && dims->items.empty()) &&
            dims->kind != Arg::Kind::Token) {
          reduce.fill(false);
          StaticShape list = integers(dims);
          for (std::size_t i = 0; i < list.rank; ++i) {
            const std::size_t d = dim(list.dims[i], self.rank);
            if (self.rank > 0) reduce[d] = true;
          }
        }
        bool keepdim = false;
        if (const Arg* k = param(node, 2, "keepdim")) {
          if (k->kind != Arg::Kind::Bool) throw Unknown{};
          keepdim = k->boolean;
        }
        StaticShape out;
        for (std::size_t d = 0; d < self.rank; ++d) {
          if (!reduce[d]) out.push(self.dims[d]);
          else if (keepdim) out.push(1);
        }
        return out;
      }
      case Rule::Cat:
      case Rule::Stack: {
        const Arg* list = param(node, 0, "tensors");
        if (!list || !list->isSequence() || list->items.empty()) throw Unknown{};
        std::vector<StaticShape> parts;
        for (const Arg& item : list->items) parts.push_back(tensor(&item));
        const std::int64_t d = integer(node, 1, "dim", 0);
        if (rule.rule == Rule::Stack) {
          for (const StaticShape& p : parts)
            if (!(p == parts[0]))
              contradiction("stack of tensors of shapes " + formatShape(parts[0].view()) + " and " + formatShape(p.view()));
          const std::int64_t r = static_cast<std::int64_t>(parts[0].rank);
          if (d < -r - 1 || d > r) contradiction("stack dimension " + std::to_string(d) + " is out of range");
          const std::size_t at = static_cast<std::size_t>(d < 0 ? d + r + 1 : d);
          StaticShape out;
          for (std::size_t i = 0; i <= parts[0].rank; ++i) {
            if (i == at && !out.push(static_cast<std::int64_t>(parts.size()))) throw Unknown{};
            if (i < parts[0].rank) out.push(parts[0].dims[i]);
          }
          return out;
        }
        // cat: 1-d empty tensors are skipped (legacy); the others agree but in `dim`.
        std::optional<StaticShape> out;
        std::size_t at = 0;
        for (const StaticShape& p : parts) {
          if (p.rank == 1 && p.dims[0] == 0) continue;
          if (p.rank == 0) contradiction("cat of a 0-d tensor");
          if (!out) {
            at = dim(d, p.rank);
            out = p;
            continue;
          }
          bool fits = p.rank == out->rank;
          for (std::size_t i = 0; fits && i < p.rank; ++i) fits = i == at || p.dims[i] == out->dims[i];
          if (!fits)
            contradiction("cat of tensors of shapes " + formatShape(out->view()) + " and " + formatShape(p.view()) +
                          " along dimension " + std::to_string(d));
          out->dims[at] += p.dims[at];
        }
        if (!out) return parts[0];
        return *out;
      }
      case Rule::IndexSelect: {
        StaticShape self = tensor(node, 0, "self");
        const std::size_t d = dim(integer(node, 1, "dim"), self.rank);
        StaticShape index = tensor(node, 2, "index");
        if (index.rank > 1) contradiction("the index must be 0-d or 1-d, is " + formatShape(index.view()));
        if (self.rank > 0) self.dims[d] = index.rank == 0 ? 1 : index.dims[0];
        return self;
      }
      case Rule::Mm:
      case Rule::Bmm: {
        StaticShape a = tensor(node, 0, "self"), b = tensor(node, 1, "mat2");
        const std::size_t rank = rule.rule == Rule::Mm ? 2 : 3;
        if (a.rank != rank || b.rank != rank)
          contradiction("needs " + std::to_string(rank) + "-d arguments, has " + formatShape(a.view()) + " and " +
                        formatShape(b.view()));
        if (a.dims[rank - 1] != b.dims[rank - 2] || (rank == 3 && a.dims[0] != b.dims[0]))
          contradiction("shapes " + formatShape(a.view()) + " and " + formatShape(b.view()) + " cannot be multiplied");
        StaticShape out = a;
        out.dims[rank - 1] = b.dims[rank - 1];
        return out;
      }
      case Rule::Factory: {
        StaticShape sizes = integers(param(node, 0, "size"));
        for (std::size_t i = 0; i < sizes.rank; ++i)
          if (sizes.dims[i] < 0) contradiction("a negative size");
        return sizes;
      }
      case Rule::Attention: {
        StaticShape q = tensor(node, 0, "query"), v = tensor(node, 2, "value");
        if (q.rank == 0 || v.rank == 0) contradiction("attention of a 0-d tensor");
        q.dims[q.rank - 1] = v.dims[v.rank - 1];
        return q;
      }
      case Rule::Getitem: return part(node);
      case Rule::None:
      case Rule::ListView: break;
    }
    throw Unknown{};
  }

  StaticShape selected(StaticShape self, std::int64_t d, std::int64_t index) const {
    if (self.rank == 0) contradiction("select on a 0-d tensor");
    const std::size_t at = dim(d, self.rank);
    if (index < -self.dims[at] || index >= self.dims[at])
      contradiction("index " + std::to_string(index) + " is out of range for size " + std::to_string(self.dims[at]));
    std::copy(self.dims.begin() + static_cast<std::ptrdiff_t>(at) + 1, self.dims.begin() + static_cast<std::ptrdiff_t>(self.rank),
              self.dims.begin() + static_cast<std::ptrdiff_t>(at));
    --self.rank;
    return self;
  }

  StaticShape sliced(StaticShape self, std::int64_t d, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step) const {
    if (self.rank == 0) contradiction("slice of a 0-d tensor");
    if (step <= 0) contradiction("slice step must be positive");
    const std::size_t at = dim(d, self.rank);
    self.dims[at] = sliceBounds(self.dims[at], start, end, step).length;
    return self;
  }

  StaticShape expanded(const StaticShape& self, const StaticShape& target) const {
    if (target.rank < self.rank)
      contradiction("cannot expand " + formatShape(self.view()) + " to the lower rank of " + formatShape(target.view()));
    StaticShape out = target;
    const std::size_t lead = target.rank - self.rank;
    for (std::size_t i = 0; i < target.rank; ++i) {
      std::int64_t t = target.dims[i];
      if (i < lead) {
        if (t < 0) contradiction("expand with a new leading size " + std::to_string(t));
        continue;
      }
      const std::int64_t s = self.dims[i - lead];
      if (t == -1) t = s;
      if (t != s && s != 1) contradiction("cannot expand " + formatShape(self.view()) + " to " + formatShape(target.view()));
      out.dims[i] = t;
    }
    return out;
  }

  // The split, split_with_sizes, chunk or unbind that getitem(container, k) takes a part of;
  // nullptr for any other getitem.
  const Node* splitOf(const Node& node) {
    if (node.args.size() < 2 || !node.args[0].isRef() || node.args[1].kind != Arg::Kind::Int) return nullptr;
    const Node& container = graph_.nodes[node.args[0].node];
    const OpRule rule = ruleFor(container);
    if (rule.rule != Rule::ListView || rule.inplace) return nullptr;
    return &container;
  }

  // getitem(container, k) of a split, split_with_sizes, chunk or unbind: part k.
  StaticShape part(const Node& node) {
    const Node* split = splitOf(node);
    if (split == nullptr) throw Unknown{};
    const Node& container = *split;
    const OpRule rule = ruleFor(container);
    const std::string_view t = rule.target;
    StaticShape self = tensor(container, 0, "self");
    const bool unbind = t.find("unbind") != std::string_view::npos;
    const bool withSizes = t.find("split_with_sizes") != std::string_view::npos;
    const bool chunk = t.find("chunk") != std::string_view::npos;
    const std::size_t dimPos = unbind ? 1 : 2;
    if (self.rank == 0) contradiction("split of a 0-d tensor");
    const std::size_t d = dim(integer(container, dimPos, "dim", 0), self.rank);
    const std::int64_t size = self.dims[d];
    std::vector<std::int64_t> sizes;
    if (unbind) {
      sizes.assign(static_cast<std::size_t>(size), 1);
    } else if (withSizes) {
      StaticShape list = integers(param(container, 1, "split_sizes"));
      sizes.assign(list.dims.begin(), list.dims.begin() + static_cast<std::ptrdiff_t>(list.rank));
    } else {
      std::int64_t chunkSize = 0;
      if (chunk) {
        const std::int64_t chunks = integer(container, 1, "chunks");
        if (chunks <= 0) throw Unknown{};
        chunkSize = (size + chunks - 1) / chunks;
      } else {
        chunkSize = integer(container, 1, "split_size");
      }
      if (chunkSize <= 0) throw Unknown{};
      for (std::int64_t at = 0; at < size; at += chunkSize) sizes.push_back(std::min(chunkSize, size - at));
      if (size == 0) sizes.push_back(0);
    }
    std::int64_t k = node.args[1].integer;
    const std::int64_t n = static_cast<std::int64_t>(sizes.size());
    if (k < 0) k += n;
    if (k < 0 || k >= n)
      contradiction("item " + std::to_string(node.args[1].integer) + " of " + std::string(t) + ", which has " + std::to_string(n) + " parts");
    if (unbind) return selected(self, static_cast<std::int64_t>(d), k);
    self.dims[d] = sizes[static_cast<std::size_t>(k)];
    return self;
  }

  const Graph& graph_;
  std::vector<std::uint8_t> state_;  // per node: kUnparsed, kNotStatic, or the rank of its shape
  std::vector<std::uint32_t> at_;    // per parsed node: its dims at pool_[at_, at_ + rank)
  std::vector<std::int64_t> pool_;
  std::vector<std::pair<const std::string*, OpRule>> rules_;  // by target text block, sorted
  const std::string* lastKey_ = nullptr;
  OpRule lastRule_;
  std::size_t current_ = 0;
  const OpRule* currentRule_ = nullptr;
  std::vector<ShapeContradiction> found_;
};

}  // namespace

std::vector<ShapeContradiction> checkAnnotatedShapes(const Graph& graph) { return ShapeChecker(graph).run(); }

}  // namespace wb
