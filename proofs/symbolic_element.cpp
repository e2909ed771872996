// proofs/symbolic_element.cpp: the element tier of the symbolic executor (see symbolic.h).
//
// Mirrors oracle/element.cpp's compiler node for node: the same layouts, the same order of
// reads and writes within a node, the same failures (which make a program fall back to the
// storage tier there too). Where the oracle computes a value, this builds its term.
#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "proofs/op_model.h"
#include "proofs/smt.h"
#include "proofs/symbolic_internal.h"

namespace wb::proofs::detail {

namespace {

using Sizes = std::vector<std::int64_t>;

struct Layout {
  std::uint32_t storage = 0;
  std::int64_t offset = 0;
  Sizes sizes, strides;
};

std::int64_t numelOf(const Sizes& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

Sizes contiguousStrides(const Sizes& sizes) {
  Sizes strides(sizes.size());
  if (sizes.empty()) return strides;
  strides.back() = 1;
  for (std::size_t i = sizes.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max<std::int64_t>(sizes[i + 1], 1);
  return strides;
}

bool isContiguous(const Layout& l) {
  std::int64_t expected = 1;
  for (std::size_t i = l.sizes.size(); i-- > 0;) {
    if (l.sizes[i] == 1) continue;
    if (l.strides[i] != expected) return false;
    expected *= l.sizes[i];
  }
  return true;
}

void advanceRowMajor(Sizes& idx, const Sizes& sizes) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) return;
    idx[d] = 0;
  }
}

// A value a node or an argument denotes (the oracle's CValue).
struct Value {
  enum class Kind : std::uint8_t { None, Int, Float, Bool, Text, Tensor, List, Opaque };
  Kind kind = Kind::None;
  bool b = false;
  std::int64_t i = 0;  // Int, Bool; Text: its hash
  double f = 0;
  Layout t;
  std::vector<Value> items;
  std::optional<z3::expr> opaque;  // Opaque: the digest
  int havoc = -1;                  // Opaque of a schema-less node: its HavocSource

  bool isTensor() const { return kind == Kind::Tensor; }
  bool isNone() const { return kind == Kind::None; }
};

struct Unsupported {
  std::string why;
  bool oracleFailsToo = true;  // false: a limit of this encoding only
};

[[noreturn]] void fail(std::string why) { throw Unsupported{std::move(why), true}; }

// A storage: its elements, and (schema-less results) the links of a result that may be a view
// of an argument's storage: bases it may view, and storages that may view it.
struct Link {
  std::uint32_t other;
  z3::expr guard;
  std::string read, write;  // read: Array(base) -> Array(view); write: Array(base) x Array(view) -> Array(base)
};
struct Storage {
  std::vector<z3::expr> elements;
  std::vector<Link> bases, derived;
};

// The tensor arguments of a schema-less call, for its result's (or its getitems') choices.
struct HavocSource {
  std::string nodeKey;
  std::vector<Layout> arguments;
};

class ElementExecutor {
 public:
  ElementExecutor(const Program& program, const SchemaTable& schemas, const NodeKeys& keys, Vocabulary& vocabulary,
                  const SymbolicOptions& options)
      : program_(program),
        schemas_(schemas),
        keys_(keys),
        v_(vocabulary),
        options_(options),
        fill_(v_.function("fill", {v_.element(), v_.element(), v_.element()}, v_.element())),
        opaqueOf_(v_.function("opaque", {v_.element(), v_.element()}, v_.element())),
        channel_(v_.function("channel", {v_.element(), v_.element()}, v_.element())),
        literal_(v_.function("literal", {v_.element(), v_.element()}, v_.element())) {}

  Result<SymbolicRun> run() {
    try {
      walk();
      return Result<SymbolicRun>::success(finish());
    } catch (const Unsupported& u) {
      Diagnostic d;
      d.file = u.oracleFailsToo ? "<element tier>" : "<symbolic element tier>";
      d.message = u.why;
      return Result<SymbolicRun>::failure(d);
    }
  }

 private:
  const Program& program_;
  const SchemaTable& schemas_;
  const NodeKeys& keys_;
  Vocabulary& v_;
  SymbolicOptions options_;
  z3::func_decl fill_, opaqueOf_, channel_, literal_;
  std::vector<Value> values_;
  std::vector<std::optional<Value>> declared_;  // placeholders as declared
  std::vector<Storage> storages_;
  std::vector<HavocSource> havocs_;
  std::vector<bool> keptViewCopy_;
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> getitemUsers_;
  std::size_t current_ = 0;
  std::size_t budget_ = 0;
  bool viewModeSeen_ = false;

  // --- terms ---

  z3::expr bv(std::uint64_t x) const { return v_.bv(x); }
  z3::expr chan(std::uint64_t tag, std::uint64_t value) const { return channel_(bv(tag), bv(value)); }
  // Channels of fill (the oracle's FillHash channels, one tag per purpose).
  enum : std::uint64_t { kWritten = 1, kWrittenItem = 2, kReturn = 3, kGetitem = 4, kSchemaless = 5, kOpaqueReturn = 6 };

  void charge(std::size_t n) {
    budget_ += n;
    if (budget_ > options_.maxElements)
      throw Unsupported{"more than " + std::to_string(options_.maxElements) +
                            " element terms (SymbolicOptions::maxElements); the symbolic element tier stops here",
                        false};
  }

  // An array of these elements over the zeros array: equal elements give equal arrays.
  z3::expr arrayOf(const std::vector<z3::expr>& elements) const {
    z3::expr a = v_.zeros();
    for (std::size_t i = 0; i < elements.size(); ++i) a = z3::store(a, bv(i), elements[i]);
    return a;
  }

  // --- storages and layouts ---

  std::int64_t sizeOf(std::uint32_t storage) const { return static_cast<std::int64_t>(storages_[storage].elements.size()); }

  Layout fresh(const Sizes& shape) {
    for (std::int64_t s : shape)
      if (s < 0) fail("negative size in shape");
    const std::int64_t n = numelOf(shape);
    charge(static_cast<std::size_t>(n));
    Layout l;
    l.storage = static_cast<std::uint32_t>(storages_.size());
    Storage s;
    s.elements.assign(static_cast<std::size_t>(n), bv(0));
    storages_.push_back(std::move(s));
    l.sizes = shape;
    l.strides = contiguousStrides(shape);
    return l;
  }

  // The storage positions of a layout's elements, in row-major order.
  std::vector<std::int64_t> positions(const Layout& l) {
    const std::int64_t n = numelOf(l.sizes);
    std::vector<std::int64_t> out;
    if (n <= 0) return out;
    charge(static_cast<std::size_t>(n));
    out.reserve(static_cast<std::size_t>(n));
    const std::int64_t size = sizeOf(l.storage);
    Sizes idx(l.sizes.size(), 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t pos = l.offset;
      for (std::size_t d = 0; d < idx.size(); ++d) pos += idx[d] * l.strides[d];
      if (pos < 0 || pos >= size) fail("a view reaches outside its storage (as_strided?)");
      out.push_back(pos);
      advanceRowMajor(idx, l.sizes);
    }
    return out;
  }

  std::vector<z3::expr> read(const Layout& l) {
    std::vector<z3::expr> out;
    const Storage& s = storages_[l.storage];
    for (std::int64_t p : positions(l)) out.push_back(s.elements[static_cast<std::size_t>(p)]);
    return out;
  }

  // Writes values[i] to the i-th position of `l`, in order (a later one wins where positions
  // repeat, as the oracle's scatter does).
  void write(const Layout& l, const std::vector<z3::expr>& values) {
    const std::vector<std::int64_t> pos = positions(l);
    if (pos.empty()) return;
    std::vector<z3::expr> next = storages_[l.storage].elements;
    for (std::size_t i = 0; i < pos.size(); ++i) next[static_cast<std::size_t>(pos[i])] = values[i];
    setContents(l.storage, std::move(next));
  }

  // A storage's new contents, and what they mean for the storages linked to it.
  void setContents(std::uint32_t s, std::vector<z3::expr> elements) {
    storages_[s].elements = std::move(elements);
    if (!storages_[s].bases.empty()) propagateUp(s);
    if (!storages_[s].derived.empty()) propagateDown(s, std::nullopt);
  }

  // A storage that may view a base was written: under each link's guard the base takes the
  // write (and its other views see it).
  void propagateUp(std::uint32_t s) {
    const std::vector<Link> bases = storages_[s].bases;
    for (const Link& link : bases) {
      Storage& base = storages_[link.other];
      const z3::expr written = v_.function(link.write, {v_.array(), v_.array()}, v_.array())(
          arrayOf(base.elements), arrayOf(storages_[s].elements));
      for (std::size_t i = 0; i < base.elements.size(); ++i)
        base.elements[i] = z3::ite(link.guard, z3::select(written, bv(i)), base.elements[i]);
      if (!base.bases.empty()) propagateUp(link.other);
      propagateDown(link.other, s);
    }
  }

  // A base was written: every storage that may view it reads it again under its guard.
  void propagateDown(std::uint32_t s, std::optional<std::uint32_t> except) {
    const std::vector<Link> derived = storages_[s].derived;
    for (const Link& link : derived) {
      if (except && link.other == *except) continue;
      Storage& view = storages_[link.other];
      const z3::expr seen = v_.function(link.read, {v_.array()}, v_.array())(arrayOf(storages_[s].elements));
      for (std::size_t i = 0; i < view.elements.size(); ++i)
        view.elements[i] = z3::ite(link.guard, z3::select(seen, bv(i)), view.elements[i]);
      propagateDown(link.other, std::nullopt);
    }
  }

  static Sizes broadcastShapes(const Sizes& a, const Sizes& b) {
    Sizes out(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
      const std::int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
      if (x != y && x != 1 && y != 1) fail("shapes do not broadcast");
      out[i] = x == 1 ? y : x;
    }
    return out;
  }

  static Layout expandTo(const Layout& l, const Sizes& target) {
    if (target.size() < l.sizes.size()) fail("cannot broadcast to a shape of lower rank");
    Layout r;
    r.storage = l.storage;
    r.offset = l.offset;
    r.sizes = target;
    r.strides.assign(target.size(), 0);
    const std::size_t lead = target.size() - l.sizes.size();
    for (std::size_t i = 0; i < l.sizes.size(); ++i) {
      const std::int64_t s = l.sizes[i];
      std::int64_t t = target[lead + i];
      if (t == -1) t = s;
      r.sizes[lead + i] = t;
      if (s == t) r.strides[lead + i] = l.strides[i];
      else if (s == 1) r.strides[lead + i] = 0;
      else fail("shapes do not broadcast");
    }
    return r;
  }

  // --- values ---

  Value literal(const Arg& arg) {
    Value v;
    switch (arg.kind) {
      case Arg::Kind::Bool: v.kind = Value::Kind::Bool; v.b = arg.boolean; v.i = arg.boolean; break;
      case Arg::Kind::Int: v.kind = Value::Kind::Int; v.i = arg.integer; break;
      case Arg::Kind::Float: v.kind = Value::Kind::Float; v.f = arg.real; break;
      case Arg::Kind::String:
      case Arg::Kind::Token: v.kind = Value::Kind::Text; v.i = static_cast<std::int64_t>(textBits(arg.text)); break;
      default: break;
    }
    return v;
  }

  Value resolve(const Arg& arg) {
    if (arg.isRef()) return values_.at(arg.node);
    if (arg.isSequence()) {
      Value v;
      v.kind = Value::Kind::List;
      for (const Arg& item : arg.items) v.items.push_back(resolve(item));
      return v;
    }
    return literal(arg);
  }

  static std::int64_t asInt(const Value& v, const char* what) {
    switch (v.kind) {
      case Value::Kind::Int:
      case Value::Kind::Bool: return v.i;
      case Value::Kind::Float:
        if (v.f == static_cast<double>(static_cast<std::int64_t>(v.f))) return static_cast<std::int64_t>(v.f);
        break;
      default: break;
    }
    fail(std::string("expected a static integer for ") + what);
  }
  static std::optional<std::int64_t> asOptInt(const Value& v, const char* what) {
    if (v.isNone()) return std::nullopt;
    return asInt(v, what);
  }
  static Sizes asIntList(const Value& v, const char* what) {
    if (v.kind == Value::Kind::List) {
      Sizes out;
      for (const Value& item : v.items) out.push_back(asInt(item, what));
      return out;
    }
    return {asInt(v, what)};
  }
  static std::uint64_t asScalar(const Value& v) {
    switch (v.kind) {
      case Value::Kind::Int:
      case Value::Kind::Bool: return static_cast<std::uint64_t>(v.i);
      case Value::Kind::Float: return scalarBits(v.f);
      case Value::Kind::None: return 0;
      case Value::Kind::Text: return static_cast<std::uint64_t>(v.i);
      default: fail("expected a scalar");
    }
  }
  static std::int64_t normDim(std::int64_t dim, std::size_t rank) {
    const std::int64_t r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
    if (dim < -r || dim >= r) fail("dimension out of range");
    return dim < 0 ? dim + r : dim;
  }
  static const Layout& tensorArg(const Value& v, const char* what) {
    if (!v.isTensor()) fail(std::string("expected a tensor for ") + what);
    return v.t;
  }
  static const Sizes& shapeOf(const Value& v) {
    static const Sizes none;
    return v.isTensor() ? v.t.sizes : none;
  }

  // The static shape of a node's annotation, as the oracle reads it.
  std::optional<Sizes> annotatedShape(std::size_t node) const { return staticShape(program_.graph.nodes[node].typeText); }

  // The constant part of what the oracle hashes for a value (oracle: sourceOf(v).constant),
  // as a descriptor: one text per oracle constant, so that a function named with it is one
  // function of the oracle's. A list's constant folds its items' constants (an opaque item
  // counts as None there; tensor and list items are left out, as the oracle leaves them).
  static void describeConstant(const Value& v, std::string& out) {
    switch (v.kind) {
      case Value::Kind::Int:
      case Value::Kind::Bool: out += "I" + std::to_string(v.i) + ","; break;
      case Value::Kind::Float: out += "F" + std::to_string(scalarBits(v.f)) + ","; break;
      case Value::Kind::Text: out += "S" + std::to_string(static_cast<std::uint64_t>(v.i)) + ","; break;
      case Value::Kind::List:
        out += "[";
        for (const Value& item : v.items)
          if (!item.isTensor() && item.kind != Value::Kind::List) describeConstant(item, out);
        out += "],";
        break;
      default: out += "N,"; break;  // None; an opaque value or a tensor has the constant 0 too
    }
  }

  // What a digest reads (the oracle's HashInputs): tensors (as arrays), opaque digests, and
  // the constant part (as a descriptor).
  struct HashInputs {
    std::vector<z3::expr> tensors, opaques;
    std::string constant;
  };

  void collectHashInputs(const Value& v, HashInputs& h) {
    switch (v.kind) {
      case Value::Kind::Tensor:
        h.tensors.push_back(arrayOf(read(v.t)));
        h.constant += "T" + std::to_string(numelOf(v.t.sizes)) + ",";
        break;
      case Value::Kind::Opaque:
        h.opaques.push_back(*v.opaque);
        h.constant += "O,";
        break;
      case Value::Kind::List:
        h.constant += "L" + std::to_string(v.items.size()) + "(";
        for (const Value& item : v.items) collectHashInputs(item, h);
        h.constant += "),";
        break;
      default: describeConstant(v, h.constant); break;
    }
  }

  z3::expr digest(const HashInputs& h, const std::string& target) {
    std::vector<z3::sort> domain;
    z3::expr_vector args(v_.ctx());
    for (const z3::expr& t : h.tensors) {
      domain.push_back(v_.array());
      args.push_back(t);
    }
    for (const z3::expr& o : h.opaques) {
      domain.push_back(v_.element());
      args.push_back(o);
    }
    const z3::func_decl f = v_.function("digest|" + target + "|" + h.constant, domain, v_.element());
    return f(args);
  }

  std::vector<z3::expr> hashFill(const z3::expr& d, const z3::expr& channel, std::int64_t n) {
    std::vector<z3::expr> out;
    for (std::int64_t e = 0; e < n; ++e) out.push_back(fill_(d, channel, bv(static_cast<std::uint64_t>(e))));
    return out;
  }

  // --- the walk ---

  void walk() {
    const Graph& g = program_.graph;
    values_.resize(g.nodes.size());
    declared_.resize(g.nodes.size());
    keptViewCopy_ = returnedAtVisiblePositions(program_);
    getitemUsers_ = getitemUsers(program_);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      current_ = i;
      const Node& n = g.nodes[i];
      switch (n.op) {
        case NodeOp::Placeholder: compilePlaceholder(n); break;
        case NodeOp::GetAttr: compileGetAttr(n); break;
        case NodeOp::CallFunction:
        case NodeOp::CallModule: values_[i] = compileCall(n); break;
        case NodeOp::Output: break;
      }
      if (options_.memoryMb > 0 && z3MemoryMb() > options_.memoryMb) throw Unsupported{"Z3 memory above " + std::to_string(options_.memoryMb) + " MB after node %" + n.name + " (SmtOptions::memoryMb); the symbolic element tier stops here", false};
    }
  }

  const std::string& key() const { return keys_.nodes[current_]; }

  void compilePlaceholder(const Node& n) {
    const std::optional<Sizes> shape = annotatedShape(current_);
    if (!shape) fail("placeholder %" + n.name + " has no static tensor type");
    Value v;
    v.kind = Value::Kind::Tensor;
    v.t = fresh(*shape);
    const std::int64_t size = numelOf(*shape);
    const Vocabulary::Input& in = v_.input(key(), n.name, true, size);
    Storage& s = storages_[v.t.storage];
    for (std::int64_t e = 0; e < size; ++e) s.elements[static_cast<std::size_t>(e)] = z3::select(in.term, bv(static_cast<std::uint64_t>(e)));
    values_[current_] = v;
    declared_[current_] = v;
  }

  void compileGetAttr(const Node& n) {
    Value v;
    if (const std::optional<Sizes> shape = annotatedShape(current_)) {
      v.kind = Value::Kind::Tensor;
      v.t = fresh(*shape);
      const std::int64_t size = numelOf(*shape);
      const Vocabulary::Input& in = v_.input("attr:" + std::string(n.target), "get_attr:" + std::string(n.target), true, size);
      Storage& s = storages_[v.t.storage];
      for (std::int64_t e = 0; e < size; ++e) s.elements[static_cast<std::size_t>(e)] = z3::select(in.term, bv(static_cast<std::uint64_t>(e)));
    } else {
      v.kind = Value::Kind::Opaque;
      v.opaque = v_.constant("get_attr:" + std::string(n.target));
    }
    values_[current_] = v;
  }

  // --- calls ---

  struct Call {
    const Node& node;
    OpModel op;
    std::vector<Value> args;  // at schema positions

    std::optional<std::size_t> indexOf(std::string_view name) const { return op.schema->argumentIndex(name); }
    const Value& arg(std::string_view name) const {
      const std::optional<std::size_t> i = indexOf(name);
      if (!i) fail("schema of " + std::string(node.target) + " has no argument '" + std::string(name) + "'");
      return args[*i];
    }
    bool has(std::string_view name) const { return indexOf(name).has_value(); }
    const Value* find(std::string_view name) const {
      const std::optional<std::size_t> i = indexOf(name);
      return i ? &args[*i] : nullptr;
    }
  };

  Value compileCall(const Node& n) {
    const OpModel op = modelOf(n, schemas_);
    if (op.getitem) return compileGetitem(n);
    if (!op.schema) return compileSchemaless(n);
    Bound bound = bindArguments(n, *op.schema);
    if (!bound.error.empty()) fail("%" + n.name + ": " + bound.error);
    Call call{n, op, {}};
    for (const Arg& a : bound.args) call.args.push_back(resolve(a));
    if (isView(op.kind) && !op.outVariant) return compileView(call);
    if (op.kind == OpKind::SymSize) {
      const Layout& self = tensorArg(call.arg("self"), "self");
      if (self.sizes.empty()) fail("sym_size of a 0-d tensor");
      Value size;
      size.kind = Value::Kind::Int;
      size.i = self.sizes[static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), self.sizes.size()))];
      return size;
    }
    if (isView(op.kind)) return compileListViewOut(call);
    if (op.kind == OpKind::Hash) return compileHashOp(call);
    return compileKernel(call);
  }

  Value compileGetitem(const Node& n) {
    if (n.args.size() < 2 || !n.args[0].isRef()) fail("getitem needs a container and an index");
    const Value container = values_.at(n.args[0].node);
    std::int64_t i = asInt(resolve(n.args[1]), "getitem index");
    if (container.kind == Value::Kind::List) {
      const std::int64_t size = static_cast<std::int64_t>(container.items.size());
      if (i < 0) i += size;
      if (i < 0 || i >= size) fail("getitem index out of range");
      return container.items[static_cast<std::size_t>(i)];
    }
    if (container.kind != Value::Kind::Opaque) fail("getitem of a value that is not a list");
    const z3::expr from = *container.opaque;
    const z3::expr salt = chan(kGetitem, static_cast<std::uint64_t>(i));
    Value v;
    if (const std::optional<Sizes> shape = annotatedShape(current_)) {
      v.kind = Value::Kind::Tensor;
      v.t = fresh(*shape);
      storages_[v.t.storage].elements = hashFill(from, salt, numelOf(*shape));
      if (container.havoc >= 0) mayAlias(v.t, havocs_[static_cast<std::size_t>(container.havoc)]);
    } else {
      v.kind = Value::Kind::Opaque;
      v.opaque = opaqueOf_(from, salt);
      v.havoc = container.havoc;
    }
    return v;
  }

  // Every tensor inside a value, in order (list items included).
  static void tensorsOf(const Value& v, std::vector<Layout>& out) {
    if (v.isTensor()) out.push_back(v.t);
    else if (v.kind == Value::Kind::List)
      for (const Value& item : v.items) tensorsOf(item, out);
  }

  Value compileSchemaless(const Node& n) {
    HashInputs h;
    std::vector<Value> args;
    for (const Arg& a : n.args) args.push_back(resolve(a));
    for (const Value& a : args) collectHashInputs(a, h);
    std::size_t k = 0;
    for (const auto& [name, a] : n.kwargs) {
      h.constant += "kw:" + name + ",";
      args.push_back(resolve(a));
      collectHashInputs(args[n.args.size() + k++], h);
    }
    const z3::expr d = digest(h, std::string(n.target));
    // Havoc (DESIGN §5): the op may write any tensor argument, under the node's choices; the
    // oracle's behaviour draws (oracle.h: HavocBehaviour) are some of those choices.
    HavocSource source;
    source.nodeKey = key();
    for (const Value& a : args) tensorsOf(a, source.arguments);
    havocWrites(n, h, source);
    Value v;
    if (const std::optional<Sizes> shape = annotatedShape(current_)) {
      v.kind = Value::Kind::Tensor;
      v.t = fresh(*shape);
      storages_[v.t.storage].elements = hashFill(d, chan(kSchemaless, 0), numelOf(*shape));
      mayAlias(v.t, source);
    } else {
      v.kind = Value::Kind::Opaque;
      v.opaque = d;
      v.havoc = static_cast<int>(havocs_.size());
    }
    havocs_.push_back(std::move(source));
    return v;
  }

  std::string shapeText(const Sizes& s) const {
    std::string out = "[";
    for (std::int64_t x : s) out += std::to_string(x) + ",";
    return out + "]";
  }

  // Argument k of a schema-less call may be written: its storage becomes, under the node's
  // write choice k, a function of every argument value and its old contents.
  void havocWrites(const Node& n, const HashInputs& h, const HavocSource& source) {
    for (std::size_t k = 0; k < source.arguments.size(); ++k) {
      const Layout& arg = source.arguments[k];
      const z3::expr w = v_.writeChoice(source.nodeKey, k);
      std::vector<z3::sort> domain;
      z3::expr_vector args(v_.ctx());
      for (const z3::expr& t : h.tensors) domain.push_back(v_.array()), args.push_back(t);
      for (const z3::expr& o : h.opaques) domain.push_back(v_.element()), args.push_back(o);
      domain.push_back(v_.array());
      args.push_back(arrayOf(storages_[arg.storage].elements));
      const std::string name = "havoc-write|" + std::string(n.target) + "|" + h.constant + "|" + std::to_string(k) + "|" +
                               std::to_string(sizeOf(arg.storage));
      const z3::expr written = v_.function(name, domain, v_.array())(args);
      std::vector<z3::expr> next = storages_[arg.storage].elements;
      for (std::size_t i = 0; i < next.size(); ++i) next[i] = z3::ite(w, z3::select(written, bv(i)), next[i]);
      setContents(arg.storage, std::move(next));
    }
  }

  // A schema-less result (or a getitem of one) in fresh storage `result` may instead be a view
  // of one of the call's tensor arguments: link it to each, under the node's result choice.
  void mayAlias(const Layout& result, const HavocSource& source) {
    if (source.arguments.empty()) return;
    const z3::expr choice = v_.resultChoice(key());
    const std::uint32_t r = result.storage;
    for (std::size_t k = 0; k < source.arguments.size(); ++k) {
      const std::uint32_t base = source.arguments[k].storage;
      if (base == r) continue;
      const z3::expr guard = choice == v_.ctx().bv_val(static_cast<std::uint64_t>(k + 1), 8);
      const std::string tag = key() + "|" + std::to_string(k) + "|" + std::to_string(sizeOf(r)) + "|" + std::to_string(sizeOf(base));
      Link link{base, guard, "view-read|" + tag, "view-write|" + tag};
      const z3::expr seen = v_.function(link.read, {v_.array()}, v_.array())(arrayOf(storages_[base].elements));
      for (std::size_t i = 0; i < storages_[r].elements.size(); ++i)
        storages_[r].elements[i] = z3::ite(guard, z3::select(seen, bv(i)), storages_[r].elements[i]);
      storages_[r].bases.push_back(link);
      Link back = link;
      back.other = r;
      storages_[base].derived.push_back(back);
    }
  }

  // Uninterpreted op with a schema.
  Value compileHashOp(const Call& call) {
    const Schema& s = *call.op.schema;
    HashInputs h;
    for (std::size_t k = 0; k < call.args.size(); ++k) {
      if (s.arguments[k].type.isTensor()) collectHashInputs(call.args[k], h);
      else describeConstant(call.args[k], h.constant);
    }
    const z3::expr d = digest(h, std::string(call.node.target));
    for (std::size_t k = 0; k < call.args.size(); ++k) {
      if (!s.arguments[k].type.isWrite()) continue;
      const Value& a = call.args[k];
      if (a.isTensor()) write(a.t, hashFill(d, chan(kWritten, k), numelOf(a.t.sizes)));
      else if (a.kind == Value::Kind::List)
        for (std::size_t j = 0; j < a.items.size(); ++j)
          if (a.items[j].isTensor())
            write(a.items[j].t, hashFill(d, chan(kWrittenItem, (k << 32) | j), numelOf(a.items[j].t.sizes)));
    }
    if (s.returns.empty()) return {};
    Value result;
    if (s.returns.size() == 1) {
      result = hashReturn(call, 0, d);
    } else {
      result.kind = Value::Kind::List;
      for (std::size_t r = 0; r < s.returns.size(); ++r) result.items.push_back(hashReturn(call, r, d));
    }
    shareAlloc(call, result);
    return result;
  }

  bool takesElement(std::size_t getitem, std::size_t r) const {
    const Node& u = program_.graph.nodes[getitem];
    return u.args.size() >= 2 && u.args[1].kind == Arg::Kind::Int && u.args[1].integer == static_cast<std::int64_t>(r);
  }

  std::optional<Sizes> returnShape(const Call& call, std::size_t r) const {
    if (call.op.schema->returns.size() == 1) return annotatedShape(current_);
    for (const auto& [user, element] : getitemUsers_[current_])
      if (takesElement(user, r))
        if (std::optional<Sizes> shape = annotatedShape(user)) return shape;
    return std::nullopt;
  }

  bool elementUsed(std::size_t r) const {
    for (const auto& [user, element] : getitemUsers_[current_])
      if (takesElement(user, r)) return true;
    return false;
  }

  Value hashReturn(const Call& call, std::size_t r, const z3::expr& d) {
    const Schema& s = *call.op.schema;
    const SchemaType& type = s.returns[r].type;
    Value v;
    if (!type.isTensor()) {
      v.kind = Value::Kind::Opaque;
      v.opaque = opaqueOf_(d, chan(kOpaqueReturn, r));
      return v;
    }
    if (type.isList) fail(std::string(call.node.target) + ": uninterpreted op returning a tensor list");
    for (std::size_t k = 0; k < s.arguments.size(); ++k) {
      if (!sameAliasSet(type, s.arguments[k].type) || !call.args[k].isTensor()) continue;
      const Layout& arg = call.args[k].t;
      if (s.arguments[k].type.isWrite()) return call.args[k];
      const std::optional<Sizes> shape = returnShape(call, r);
      if (shape && *shape == arg.sizes) return call.args[k];
      fail(std::string(call.node.target) + ": unknown view op");
    }
    const std::optional<Sizes> shape = returnShape(call, r);
    if (!shape) {
      if (s.returns.size() > 1 && !elementUsed(r)) {
        v.kind = Value::Kind::Opaque;
        v.opaque = d;
        return v;
      }
      fail("%" + call.node.name + " (" + std::string(call.node.target) + "): result shape unknown (no annotation)");
    }
    v.kind = Value::Kind::Tensor;
    v.t = fresh(*shape);
    storages_[v.t.storage].elements = hashFill(d, chan(kReturn, r), numelOf(*shape));
    return v;
  }

  // _share_alloc_with_arg_idx = k: the result, computed into fresh storage, is moved into
  // argument k's storage.
  void shareAlloc(const Call& call, Value& result) {
    const std::optional<int> k = call.node.shareAllocArgIndex();
    if (!k || !result.isTensor()) return;
    if (*k < 0 || static_cast<std::size_t>(*k) >= call.node.args.size()) fail("_share_alloc_with_arg_idx out of range");
    const Value base = resolve(call.node.args[static_cast<std::size_t>(*k)]);
    if (!base.isTensor()) fail("_share_alloc_with_arg_idx names a non-tensor argument");
    Layout shared;
    shared.storage = base.t.storage;
    shared.offset = base.t.offset;
    shared.sizes = result.t.sizes;
    shared.strides = contiguousStrides(shared.sizes);
    if (shared.offset + numelOf(shared.sizes) > sizeOf(shared.storage))
      fail("_share_alloc_with_arg_idx: the result does not fit in argument's storage");
    copyElements(result.t, shared);
    result.t = shared;
  }

  // dest[e] = src[e], element by element (the oracle's Copy step).
  void copyElements(const Layout& from, const Layout& to) {
    const std::vector<std::int64_t> src = positions(from), dst = positions(to);
    if (dst.empty()) return;
    std::vector<z3::expr> next = storages_[to.storage].elements;
    const bool same = from.storage == to.storage;
    for (std::size_t e = 0; e < dst.size(); ++e)
      next[static_cast<std::size_t>(dst[e])] =
          (same ? next : storages_[from.storage].elements)[static_cast<std::size_t>(src[e])];
    setContents(to.storage, std::move(next));
  }

  // --- views ---

  // The layout of a view of `self` (the oracle's viewLayout), reading the call's arguments.
  Layout viewLayout(OpKind kind, const Call& call, const Layout& self, bool& needsCopy) {
    Layout l = self;
    const std::size_t rank = self.sizes.size();
    switch (kind) {
      case OpKind::Select: {
        const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
        if (rank == 0) fail("select on a 0-d tensor");
        std::int64_t i = asInt(call.arg("index"), "index");
        if (i < 0) i += self.sizes[d];
        if (i < 0 || i >= self.sizes[d]) fail("select index out of range");
        l.offset += i * self.strides[d];
        l.sizes.erase(l.sizes.begin() + static_cast<std::ptrdiff_t>(d));
        l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
        return l;
      }
      case OpKind::Slice:
      case OpKind::Narrow: {
        const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
        if (rank == 0) fail("slice of a 0-d tensor");
        const std::int64_t size = self.sizes[d];
        std::int64_t start = 0, end = 0, step = 1;
        if (kind == OpKind::Narrow) {
          start = asInt(call.arg("start"), "start");
          if (start < 0) start += size;
          end = start + asInt(call.arg("length"), "length");
          if (start < 0 || end > size || end < start) fail("narrow out of range");
        } else {
          start = asOptInt(call.arg("start"), "start").value_or(0);
          end = asOptInt(call.arg("end"), "end").value_or(size);
          step = asInt(call.arg("step"), "step");
          if (step <= 0) fail("slice step must be positive");
          if (start < 0) start += size;
          if (end < 0) end += size;
          start = std::clamp<std::int64_t>(start, 0, size);
          end = std::clamp<std::int64_t>(end, start, size);
        }
        l.offset += start * self.strides[d];
        l.sizes[d] = (end - start + step - 1) / step;
        l.strides[d] *= step;
        return l;
      }
      case OpKind::Expand: return expandTo(self, asIntList(call.arg("size"), "size"));
      case OpKind::ExpandAs: return expandTo(self, tensorArg(call.arg("other"), "other").sizes);
      case OpKind::Transpose:
      case OpKind::T: {
        if (kind == OpKind::T && rank < 2) return l;
        const std::size_t a = kind == OpKind::T ? 0 : static_cast<std::size_t>(normDim(asInt(call.arg("dim0"), "dim0"), rank));
        const std::size_t b = kind == OpKind::T ? 1 : static_cast<std::size_t>(normDim(asInt(call.arg("dim1"), "dim1"), rank));
        if (rank == 0) return l;
        std::swap(l.sizes[a], l.sizes[b]);
        std::swap(l.strides[a], l.strides[b]);
        return l;
      }
      case OpKind::Permute: {
        const Sizes dims = asIntList(call.arg("dims"), "dims");
        if (dims.size() != rank) fail("permute: wrong number of dims");
        std::vector<bool> seen(rank, false);
        for (std::size_t i = 0; i < rank; ++i) {
          const std::size_t d = static_cast<std::size_t>(normDim(dims[i], rank));
          if (seen[d]) fail("permute: repeated dim");
          seen[d] = true;
          l.sizes[i] = self.sizes[d];
          l.strides[i] = self.strides[d];
        }
        return l;
      }
      case OpKind::Unsqueeze: {
        std::int64_t d = asInt(call.arg("dim"), "dim");
        const std::int64_t r = static_cast<std::int64_t>(rank);
        if (d < -r - 1 || d > r) fail("unsqueeze: dim out of range");
        if (d < 0) d += r + 1;
        const std::size_t u = static_cast<std::size_t>(d);
        const std::int64_t stride = u < rank ? self.sizes[u] * self.strides[u] : 1;
        l.sizes.insert(l.sizes.begin() + d, 1);
        l.strides.insert(l.strides.begin() + d, stride);
        return l;
      }
      case OpKind::Squeeze: {
        std::vector<bool> drop(rank, false);
        if (call.has("dim")) {
          for (std::int64_t d : asIntList(call.arg("dim"), "dim")) {
            if (rank == 0) break;
            const std::size_t u = static_cast<std::size_t>(normDim(d, rank));
            drop[u] = self.sizes[u] == 1;
          }
        } else {
          for (std::size_t u = 0; u < rank; ++u) drop[u] = self.sizes[u] == 1;
        }
        l.sizes.clear();
        l.strides.clear();
        for (std::size_t u = 0; u < rank; ++u)
          if (!drop[u]) l.sizes.push_back(self.sizes[u]), l.strides.push_back(self.strides[u]);
        return l;
      }
      case OpKind::View:
      case OpKind::ViewAs: {
        Sizes target = kind == OpKind::ViewAs ? tensorArg(call.arg("other"), "other").sizes
                                              : asIntList(call.has("size") ? call.arg("size") : call.arg("shape"), "size");
        std::int64_t known = 1, infer = -1;
        for (std::size_t i = 0; i < target.size(); ++i) {
          if (target[i] == -1) {
            if (infer >= 0) fail("view: two -1 sizes");
            infer = static_cast<std::int64_t>(i);
          } else {
            known *= target[i];
          }
        }
        const std::int64_t n = numelOf(self.sizes);
        if (infer >= 0) target[static_cast<std::size_t>(infer)] = known == 0 ? 0 : n / known;
        if (numelOf(target) != n) fail("view: size mismatch");
        if (!isContiguous(self)) {
          if (call.op.schema->name == "view" && !call.op.copyVariant) fail("view of a non-contiguous tensor");
          needsCopy = true;
        }
        l.sizes = target;
        l.strides = contiguousStrides(target);
        return l;
      }
      case OpKind::Diagonal: {
        const std::int64_t off = asInt(call.arg("offset"), "offset");
        const std::size_t d1 = static_cast<std::size_t>(normDim(asInt(call.arg("dim1"), "dim1"), rank));
        const std::size_t d2 = static_cast<std::size_t>(normDim(asInt(call.arg("dim2"), "dim2"), rank));
        if (rank < 2 || d1 == d2) fail("diagonal: bad dims");
        std::int64_t len = off >= 0 ? std::min(self.sizes[d1], self.sizes[d2] - off) : std::min(self.sizes[d1] + off, self.sizes[d2]);
        len = std::max<std::int64_t>(len, 0);
        if (len > 0) l.offset += off >= 0 ? off * self.strides[d2] : -off * self.strides[d1];
        l.sizes.clear();
        l.strides.clear();
        for (std::size_t u = 0; u < rank; ++u)
          if (u != d1 && u != d2) l.sizes.push_back(self.sizes[u]), l.strides.push_back(self.strides[u]);
        l.sizes.push_back(len);
        l.strides.push_back(self.strides[d1] + self.strides[d2]);
        return l;
      }
      case OpKind::AsStrided: {
        l.sizes = asIntList(call.arg("size"), "size");
        l.strides = asIntList(call.arg("stride"), "stride");
        if (l.sizes.size() != l.strides.size()) fail("as_strided: size and stride differ in rank");
        l.offset = asOptInt(call.arg("storage_offset"), "storage_offset").value_or(self.offset);
        return l;
      }
      case OpKind::Alias: return l;
      case OpKind::Contiguous:
        needsCopy = !isContiguous(self);
        return l;
      default: fail("not a view");
    }
  }

  std::vector<Layout> listViewLayouts(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const std::size_t rank = self.sizes.size();
    const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), rank));
    if (rank == 0) fail("split of a 0-d tensor");
    const std::int64_t size = self.sizes[d];
    std::vector<Layout> parts;
    if (call.op.kind == OpKind::Unbind) {
      for (std::int64_t i = 0; i < size; ++i) {
        Layout l = self;
        l.offset += i * self.strides[d];
        l.sizes.erase(l.sizes.begin() + static_cast<std::ptrdiff_t>(d));
        l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
        parts.push_back(l);
      }
      return parts;
    }
    Sizes sizes;
    if (call.op.kind == OpKind::SplitWithSizes) {
      const Value& list = call.arg("split_sizes");
      if (list.kind == Value::Kind::List)
        for (const Value& item : list.items) sizes.push_back(asInt(item, "split_sizes"));
      else
        sizes.push_back(asInt(list, "split_sizes"));
      std::int64_t total = 0;
      for (std::int64_t s : sizes) total += s;
      if (total != size) fail("split_with_sizes: sizes do not add up");
    } else {
      std::int64_t chunk = 0;
      if (call.op.kind == OpKind::Chunk) {
        const std::int64_t chunks = asInt(call.arg("chunks"), "chunks");
        if (chunks <= 0) fail("chunk: chunks must be positive");
        chunk = (size + chunks - 1) / chunks;
      } else {
        chunk = asInt(call.arg("split_size"), "split_size");
      }
      if (chunk <= 0 && size > 0) fail("split: size must be positive");
      for (std::int64_t at = 0; at < size; at += chunk) sizes.push_back(std::min(chunk, size - at));
      if (size == 0) sizes.push_back(0);
    }
    std::int64_t at = 0;
    for (std::int64_t s : sizes) {
      Layout l = self;
      l.offset += at * self.strides[d];
      l.sizes[d] = s;
      parts.push_back(l);
      at += s;
    }
    return parts;
  }

  Value materialize(const Layout& from) {
    Value v;
    v.kind = Value::Kind::Tensor;
    v.t = fresh(from.sizes);
    copyElements(from, v.t);
    return v;
  }

  bool viewIsCopy(const Call& call) {
    if (!call.op.copyVariant) return false;
    viewModeSeen_ = true;
    if (options_.viewMode == oracle::ViewMode::CopyViews) return true;
    return call.op.schema->name == "view_copy" && keptViewCopy_[current_];
  }

  Value compileView(const Call& call) {
    const bool copy = viewIsCopy(call);
    if (isListView(call.op.kind)) {
      Value list;
      list.kind = Value::Kind::List;
      for (const Layout& part : listViewLayouts(call)) {
        if (copy) {
          list.items.push_back(materialize(part));
        } else {
          Value v;
          v.kind = Value::Kind::Tensor;
          v.t = part;
          list.items.push_back(v);
        }
      }
      return list;
    }
    bool needsCopy = false;
    const Layout& self = tensorArg(call.arg("self"), "self");
    Layout l = viewLayout(call.op.kind, call, self, needsCopy);
    if (needsCopy) {
      const Value c = materialize(self);
      l.storage = c.t.storage;
      l.offset = 0;
      l.strides = contiguousStrides(l.sizes);
      if (call.op.kind == OpKind::Contiguous) return c;
    }
    if (copy) return materialize(l);
    Value v;
    v.kind = Value::Kind::Tensor;
    v.t = l;
    return v;
  }

  Value compileListViewOut(const Call& call) {
    const std::vector<Layout> parts = listViewLayouts(call);
    const Value& out = call.arg("out");
    if (out.kind != Value::Kind::List || out.items.size() != parts.size()) fail(std::string(call.node.target) + ": out list arity");
    for (std::size_t j = 0; j < parts.size(); ++j) {
      const Layout& dst = tensorArg(out.items[j], "out");
      if (dst.sizes != parts[j].sizes) fail(std::string(call.node.target) + ": out shape mismatch");
      write(dst, read(parts[j]));  // a kernel: all of the part read, then written
    }
    return {};
  }

  // --- interpreted kernels ---

  std::vector<z3::expr> operandOf(const Value& v, const Sizes& target) {
    if (v.isTensor()) return read(v.t.sizes == target ? v.t : expandTo(v.t, target));
    const std::int64_t n = numelOf(target);
    charge(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    return std::vector<z3::expr>(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), bv(asScalar(v)));
  }

  std::vector<z3::expr> operandOwnShape(const Value& v, const char* what) { return read(tensorArg(v, what)); }

  // The result of a single-tensor kernel: `out` (numel(shape) elements) written to the written
  // argument (in-place, out=) or to fresh storage; then _share_alloc_with_arg_idx.
  Value finishSingle(const Call& call, const Sizes& shape, const std::vector<z3::expr>& out) {
    Value result;
    if (call.op.resultWrites >= 0) {
      const Value& written = call.args[static_cast<std::size_t>(call.op.resultWrites)];
      const Layout& l = tensorArg(written, "written argument");
      if (l.sizes != shape) fail("%" + call.node.name + ": result shape differs from the written argument's");
      write(l, out);
      result = written;
    } else {
      result.kind = Value::Kind::Tensor;
      result.t = fresh(shape);
      write(result.t, out);
    }
    shareAlloc(call, result);
    return result;
  }

  z3::expr arith(const char* name, const z3::expr& x, const z3::expr& y, std::uint64_t alpha) {
    return v_.function(name, {v_.element(), v_.element(), v_.element()}, v_.element())(x, y, bv(alpha));
  }
  z3::expr add(const z3::expr& x, const z3::expr& y, std::uint64_t alpha) { return arith("add", x, y, alpha); }

  z3::expr wrapIndex(const z3::expr& value, std::int64_t size) const {
    if (size <= 0) return bv(0);
    return z3::smod(value, bv(static_cast<std::uint64_t>(size)));
  }
  z3::expr lowBit(const z3::expr& x) const { return x.extract(0, 0) == v_.ctx().bv_val(1, 1); }

  Value compileKernel(const Call& call) {
    const OpKind kind = call.op.kind;
    if (kind == OpKind::ForeachAdd || kind == OpKind::ForeachSub || kind == OpKind::ForeachMul) return compileForeach(call);
    const bool inplace = call.op.inplace;
    auto selfShape = [&]() -> const Sizes& { return tensorArg(call.arg("self"), "self").sizes; };
    std::vector<z3::expr> out;
    Sizes shape;
    switch (kind) {
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Rsub:
      case OpKind::Mul: {
        const Value& self = call.arg("self");
        const Value& other = call.arg("other");
        shape = inplace ? selfShape() : broadcastShapes(shapeOf(self), shapeOf(other));
        const std::vector<z3::expr> a = operandOf(self, shape), b = operandOf(other, shape);
        const Value* alphaArg = call.find("alpha");
        const std::uint64_t alpha = alphaArg && !alphaArg->isNone() ? asScalar(*alphaArg) : 1;
        for (std::size_t e = 0; e < a.size(); ++e) {
          if (kind == OpKind::Add) out.push_back(arith("add", a[e], b[e], alpha));
          else if (kind == OpKind::Sub) out.push_back(arith("sub", a[e], b[e], alpha));
          else if (kind == OpKind::Rsub) out.push_back(arith("sub", b[e], a[e], alpha));  // other - self * alpha
          else out.push_back(v_.function("mul", {v_.element(), v_.element()}, v_.element())(a[e], b[e]));
        }
        break;
      }
      case OpKind::Neg: {
        shape = selfShape();
        for (const z3::expr& x : operandOf(call.arg("self"), shape))
          out.push_back(v_.function("neg", {v_.element()}, v_.element())(x));
        break;
      }
      case OpKind::Sum:
      case OpKind::Mean: return compileReduction(call);
      case OpKind::Copy:
      case OpKind::Clone:
      case OpKind::Fill:
      case OpKind::Zero:
      case OpKind::FactoryLike:
        shape = selfShape();
        if (kind == OpKind::Copy) out = operandOf(call.arg("src"), shape);
        else if (kind == OpKind::Clone) out = operandOf(call.arg("self"), shape);
        else if (kind == OpKind::Fill) out = operandOf(call.arg("value"), shape);
        else if (kind == OpKind::Zero) out = operandOf(Value{}, shape);
        else out = factoryFill(call, shape);
        break;
      case OpKind::Factory:
        shape = asIntList(call.arg("size"), "size");
        out = factoryFill(call, shape);
        break;
      case OpKind::Arange: {
        const Value* startArg = call.find("start");
        const std::int64_t start = startArg ? asInt(*startArg, "start") : 0;
        const std::int64_t end = asInt(call.arg("end"), "end");
        const Value* stepArg = call.find("step");
        const std::int64_t step = stepArg ? asInt(*stepArg, "step") : 1;
        if (step == 0) fail("arange: step 0");
        const std::int64_t n = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
        shape = {std::max<std::int64_t>(n, 0)};
        for (std::int64_t e = 0; e < shape[0]; ++e)
          out.push_back(bv(static_cast<std::uint64_t>(start) + static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(e)));
        break;
      }
      case OpKind::Where: {
        const Value &c = call.arg("condition"), &a = call.arg("self"), &b = call.arg("other");
        shape = broadcastShapes(broadcastShapes(shapeOf(c), shapeOf(a)), shapeOf(b));
        const std::vector<z3::expr> cs = operandOf(c, shape), as = operandOf(a, shape), bs = operandOf(b, shape);
        for (std::size_t e = 0; e < cs.size(); ++e) out.push_back(z3::ite(lowBit(cs[e]), as[e], bs[e]));
        break;
      }
      case OpKind::MaskedFill: {
        const Value &self = call.arg("self"), &mask = call.arg("mask");
        shape = inplace ? selfShape() : broadcastShapes(shapeOf(self), shapeOf(mask));
        const std::vector<z3::expr> s = operandOf(self, shape), m = operandOf(mask, shape), value = operandOf(call.arg("value"), shape);
        for (std::size_t e = 0; e < s.size(); ++e) out.push_back(z3::ite(lowBit(m[e]), value[e], s[e]));
        break;
      }
      case OpKind::IndexPut:
      case OpKind::IndexTensor: return compileAdvancedIndex(call);
      case OpKind::IndexCopy:
      case OpKind::IndexAdd:
      case OpKind::IndexSelect: return compileIndexDim(call);
      case OpKind::Scatter:
      case OpKind::ScatterAdd: return compileScatter(call);
      case OpKind::SliceScatter:
      case OpKind::SelectScatter:
      case OpKind::Cat:
      case OpKind::Stack: return compileAssemble(call);
      default: fail("internal: kernel not handled");
    }
    return finishSingle(call, shape, out);
  }

  std::vector<z3::expr> factoryFill(const Call& call, const Sizes& shape) {
    const std::string& name = call.op.schema->name;
    Value value;
    value.kind = Value::Kind::Int;
    if (name.starts_with("ones")) value.i = 1;
    else if (name.starts_with("full")) value = call.arg("fill_value");
    return operandOf(value, shape);
  }

  Value compileReduction(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const std::size_t rank = self.sizes.size();
    std::vector<bool> reduce(rank, true);
    bool keepdim = false;
    if (call.has("dim")) {
      const Value& dims = call.arg("dim");
      if (!dims.isNone() && !(dims.kind == Value::Kind::List && dims.items.empty())) {
        reduce.assign(rank, false);
        // A 0-d tensor takes dim 0 or -1 and reduces nothing (as core's shape rule says).
        for (std::int64_t d : asIntList(dims, "dim")) {
          const std::size_t u = static_cast<std::size_t>(normDim(d, rank));
          if (rank > 0) reduce[u] = true;
        }
      }
      if (const Value* keep = call.find("keepdim")) keepdim = asInt(*keep, "keepdim") != 0;
    }
    Sizes shape;
    for (std::size_t d = 0; d < rank; ++d) {
      if (!reduce[d]) shape.push_back(self.sizes[d]);
      else if (keepdim) shape.push_back(1);
    }
    Sizes outStrides(rank, 0);
    {
      std::int64_t stride = 1;
      for (std::size_t d = rank; d-- > 0;)
        if (!reduce[d]) outStrides[d] = stride, stride *= self.sizes[d];
    }
    const std::int64_t n = numelOf(self.sizes);
    const std::int64_t outN = numelOf(shape);
    const std::int64_t count = outN == 0 ? 0 : n / std::max<std::int64_t>(outN, 1);
    const std::vector<z3::expr> in = operandOwnShape(call.arg("self"), "self");
    // Each output element: a function of its group of input elements, in input order.
    std::vector<std::vector<z3::expr>> groups(static_cast<std::size_t>(std::max<std::int64_t>(outN, 0)));
    Sizes idx(rank, 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t o = 0;
      for (std::size_t d = 0; d < rank; ++d) o += idx[d] * outStrides[d];
      if (o >= 0 && o < outN) groups[static_cast<std::size_t>(o)].push_back(in[static_cast<std::size_t>(e)]);
      advanceRowMajor(idx, self.sizes);
    }
    const bool mean = call.op.kind == OpKind::Mean;
    std::vector<z3::expr> out;
    for (const std::vector<z3::expr>& group : groups) {
      const std::string name = (mean ? "mean|" + std::to_string(count) : std::string("sum")) + "|" + std::to_string(group.size());
      out.push_back(v_.function(name, {v_.array()}, v_.element())(arrayOf(group)));
    }
    return finishSingle(call, shape, out);
  }

  // index_put / index.Tensor: advanced indexing with a list of optional index tensors.
  Value compileAdvancedIndex(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const Sizes S = self.sizes;
    const Value& indices = call.arg("indices");
    if (indices.kind != Value::Kind::List) fail("index: indices must be a list");
    if (indices.items.size() > S.size()) fail("index: too many indices");
    std::vector<std::size_t> indexed;
    Sizes I;
    for (std::size_t j = 0; j < indices.items.size(); ++j) {
      if (indices.items[j].isNone()) continue;
      const Layout& ix = tensorArg(indices.items[j], "index");
      indexed.push_back(j);
      I = indexed.size() == 1 ? ix.sizes : broadcastShapes(I, ix.sizes);
    }
    if (indexed.empty()) fail("index: no index tensors");
    const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
    Sizes R;
    std::vector<int> dimRole;  // per R dim: -1 an I dim, else the self dim
    std::vector<bool> isIndexed(S.size(), false);
    for (std::size_t j : indexed) isIndexed[j] = true;
    auto pushI = [&] {
      for (std::int64_t s : I) R.push_back(s), dimRole.push_back(-1);
    };
    if (!adjacent) pushI();
    for (std::size_t d = 0; d < S.size(); ++d) {
      if (isIndexed[d]) {
        if (adjacent && d == indexed.front()) pushI();
        continue;
      }
      R.push_back(S[d]);
      dimRole.push_back(static_cast<int>(d));
    }
    const Sizes cs = contiguousStrides(S);
    const std::int64_t nR = numelOf(R);
    for (std::size_t j : indexed)
      if (S[j] == 0 && nR > 0) fail("index: indexing a dimension of size 0");
    const Sizes Istrides = contiguousStrides(I);
    std::vector<std::int64_t> base(static_cast<std::size_t>(nR)), ip(static_cast<std::size_t>(nR));
    Sizes idx(R.size(), 0);
    for (std::int64_t e = 0; e < nR; ++e) {
      std::int64_t b = 0, p = 0;
      std::size_t iDim = 0;
      for (std::size_t r = 0; r < R.size(); ++r) {
        if (dimRole[r] < 0) p += idx[r] * Istrides[iDim++];
        else b += idx[r] * cs[static_cast<std::size_t>(dimRole[r])];
      }
      base[static_cast<std::size_t>(e)] = b;
      ip[static_cast<std::size_t>(e)] = p;
      advanceRowMajor(idx, R);
    }
    const std::vector<z3::expr> selfElements = operandOwnShape(call.arg("self"), "self");
    std::vector<std::vector<z3::expr>> indexOperands;
    for (std::size_t j : indexed) indexOperands.push_back(operandOf(indices.items[j], I));
    auto position = [&](std::size_t e) {
      z3::expr pos = bv(static_cast<std::uint64_t>(base[e]));
      for (std::size_t j = 0; j < indexed.size(); ++j)
        pos = pos + wrapIndex(indexOperands[j][static_cast<std::size_t>(ip[e])], S[indexed[j]]) *
                        bv(static_cast<std::uint64_t>(cs[indexed[j]]));
      return pos;
    };
    z3::expr A = arrayOf(selfElements);
    std::vector<z3::expr> out;
    if (call.op.kind == OpKind::IndexTensor) {
      for (std::size_t e = 0; e < static_cast<std::size_t>(nR); ++e) out.push_back(z3::select(A, position(e)));
      return finishSingle(call, R, out);
    }
    const std::vector<z3::expr> values = operandOf(call.arg("values"), R);
    const bool accumulate = asInt(call.arg("accumulate"), "accumulate") != 0;
    for (std::size_t e = 0; e < static_cast<std::size_t>(nR); ++e) {
      const z3::expr p = position(e);
      A = z3::store(A, p, accumulate ? add(z3::select(A, p), values[e], 1) : values[e]);
    }
    for (std::size_t q = 0; q < selfElements.size(); ++q) out.push_back(z3::select(A, bv(q)));
    return finishSingle(call, S, out);
  }

  // index_copy / index_add / index_select: an index along one dimension.
  Value compileIndexDim(const Call& call) {
    const OpKind kind = call.op.kind;
    const Layout& self = tensorArg(call.arg("self"), "self");
    const Sizes S = self.sizes;
    const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), S.size()));
    const Layout& index = tensorArg(call.arg("index"), "index");
    if (index.sizes.size() > 1) fail("index along a dim: index must be 0-d or 1-d");
    const std::int64_t L = numelOf(index.sizes);
    const std::int64_t dimSize = S.empty() ? 1 : S[d];
    Sizes iterShape = S;
    if (!S.empty()) iterShape[d] = L;
    const Sizes cs = contiguousStrides(S);
    const std::int64_t dimStride = S.empty() ? 1 : cs[d];
    const std::int64_t n = numelOf(iterShape);
    if (dimSize == 0 && n > 0) fail("index along a dim: the dimension has size 0");
    std::vector<std::int64_t> base(static_cast<std::size_t>(n)), coord(static_cast<std::size_t>(n));
    Sizes idx(iterShape.size(), 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t b = 0;
      for (std::size_t j = 0; j < iterShape.size(); ++j)
        if (j != d) b += idx[j] * cs[j];
      base[static_cast<std::size_t>(e)] = b;
      coord[static_cast<std::size_t>(e)] = iterShape.empty() ? 0 : idx[d];
      advanceRowMajor(idx, iterShape);
    }
    const std::vector<z3::expr> selfElements = operandOwnShape(call.arg("self"), "self");
    const std::vector<z3::expr> indexElements = operandOwnShape(call.arg("index"), "index");
    auto position = [&](std::size_t e) {
      return bv(static_cast<std::uint64_t>(base[e])) +
             wrapIndex(indexElements[static_cast<std::size_t>(coord[e])], dimSize) * bv(static_cast<std::uint64_t>(dimStride));
    };
    z3::expr A = arrayOf(selfElements);
    std::vector<z3::expr> out;
    if (kind == OpKind::IndexSelect) {
      for (std::size_t e = 0; e < static_cast<std::size_t>(n); ++e) out.push_back(z3::select(A, position(e)));
      return finishSingle(call, iterShape, out);
    }
    const Value& source = call.arg("source");
    if (shapeOf(source) != iterShape) fail("index_copy/index_add: source shape mismatch");
    const std::vector<z3::expr> src = operandOf(source, iterShape);
    const bool addition = kind == OpKind::IndexAdd;
    const std::uint64_t alpha = addition && call.has("alpha") ? asScalar(call.arg("alpha")) : 1;
    for (std::size_t e = 0; e < static_cast<std::size_t>(n); ++e) {
      const z3::expr p = position(e);
      A = z3::store(A, p, addition ? add(z3::select(A, p), src[e], alpha) : src[e]);
    }
    for (std::size_t q = 0; q < selfElements.size(); ++q) out.push_back(z3::select(A, bv(q)));
    return finishSingle(call, S, out);
  }

  Value compileScatter(const Call& call) {
    const Layout& self = tensorArg(call.arg("self"), "self");
    const Sizes S = self.sizes;
    const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), S.size()));
    const Layout& index = tensorArg(call.arg("index"), "index");
    const Sizes X = index.sizes;
    if (X.size() != S.size() && !(X.empty() && S.empty())) fail("scatter: index rank differs from self's");
    const Value& src = call.has("src") ? call.arg("src") : call.arg("value");
    const Sizes srcShape = shapeOf(src);
    for (std::size_t j = 0; j < X.size(); ++j) {
      if (j != d && X[j] > S[j]) fail("scatter: index larger than self");
      if (src.isTensor() && (srcShape.size() != X.size() || X[j] > srcShape[j])) fail("scatter: index larger than src");
    }
    const Sizes cs = contiguousStrides(S);
    const Sizes srcStrides = contiguousStrides(srcShape);
    const std::int64_t dimSize = S.empty() ? 1 : S[d], dimStride = S.empty() ? 1 : cs[d];
    const std::int64_t n = numelOf(X);
    if (dimSize == 0 && n > 0) fail("scatter: the dimension has size 0");
    std::vector<std::int64_t> base(static_cast<std::size_t>(n)), sp(static_cast<std::size_t>(n));
    Sizes idx(X.size(), 0);
    for (std::int64_t e = 0; e < n; ++e) {
      std::int64_t b = 0, p = 0;
      for (std::size_t j = 0; j < X.size(); ++j) {
        if (j != d) b += idx[j] * cs[j];
        if (src.isTensor()) p += idx[j] * srcStrides[j];
      }
      base[static_cast<std::size_t>(e)] = b;
      sp[static_cast<std::size_t>(e)] = p;
      advanceRowMajor(idx, X);
    }
    const std::vector<z3::expr> selfElements = operandOwnShape(call.arg("self"), "self");
    const std::vector<z3::expr> indexElements = operandOwnShape(call.arg("index"), "index");
    const bool isConst = !src.isTensor();
    const std::vector<z3::expr> srcElements = isConst ? std::vector<z3::expr>{bv(asScalar(src))} : operandOwnShape(src, "src");
    const bool addition = call.op.kind == OpKind::ScatterAdd;
    z3::expr A = arrayOf(selfElements);
    for (std::size_t e = 0; e < static_cast<std::size_t>(n); ++e) {
      const z3::expr value = isConst ? srcElements[0] : srcElements[static_cast<std::size_t>(sp[e])];
      const z3::expr p = bv(static_cast<std::uint64_t>(base[e])) +
                         wrapIndex(indexElements[e], dimSize) * bv(static_cast<std::uint64_t>(dimStride));
      A = z3::store(A, p, addition ? add(z3::select(A, p), value, 1) : value);
    }
    std::vector<z3::expr> out;
    for (std::size_t q = 0; q < selfElements.size(); ++q) out.push_back(z3::select(A, bv(q)));
    return finishSingle(call, S, out);
  }

  // slice_scatter, select_scatter, cat, stack: the output assembled from pieces at static places.
  Value compileAssemble(const Call& call) {
    const OpKind kind = call.op.kind;
    Sizes shape;
    std::vector<Value> pieces;
    std::vector<Layout> placements;
    bool startFromSelf = false;
    if (kind == OpKind::SliceScatter || kind == OpKind::SelectScatter) {
      const Layout& self = tensorArg(call.arg("self"), "self");
      shape = self.sizes;
      startFromSelf = true;
      Layout out;
      out.sizes = shape;
      out.strides = contiguousStrides(shape);
      bool needsCopy = false;
      const Layout place = viewLayout(kind == OpKind::SliceScatter ? OpKind::Slice : OpKind::Select, call, out, needsCopy);
      const Value& src = call.arg("src");
      if (shapeOf(src) != place.sizes) fail(std::string(call.node.target) + ": src shape differs from the slice");
      pieces.push_back(src);
      placements.push_back(place);
    } else {
      const Value& tensors = call.arg("tensors");
      if (tensors.kind != Value::Kind::List || tensors.items.empty()) fail("cat/stack: empty tensor list");
      std::vector<const Value*> list;
      for (const Value& t : tensors.items) {
        tensorArg(t, "tensors");
        if (kind == OpKind::Cat && t.t.sizes.size() == 1 && t.t.sizes[0] == 0 && tensors.items.size() > 1) continue;
        list.push_back(&t);
      }
      if (list.empty()) list.push_back(&tensors.items[0]);
      const Sizes first = list[0]->t.sizes;
      if (kind == OpKind::Stack) {
        const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), first.size() + 1));
        shape = first;
        shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), static_cast<std::int64_t>(list.size()));
        const Sizes strides = contiguousStrides(shape);
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (list[i]->t.sizes != first) fail("stack: shapes differ");
          Layout place;
          place.offset = static_cast<std::int64_t>(i) * strides[d];
          place.sizes = first;
          place.strides = strides;
          place.strides.erase(place.strides.begin() + static_cast<std::ptrdiff_t>(d));
          pieces.push_back(*list[i]);
          placements.push_back(place);
        }
      } else {
        const std::size_t d = static_cast<std::size_t>(normDim(asInt(call.arg("dim"), "dim"), first.size()));
        if (first.empty()) fail("cat of 0-d tensors");
        shape = first;
        shape[d] = 0;
        for (const Value* t : list) {
          if (t->t.sizes.size() != first.size()) fail("cat: ranks differ");
          for (std::size_t j = 0; j < first.size(); ++j)
            if (j != d && t->t.sizes[j] != first[j]) fail("cat: shapes differ");
          shape[d] += t->t.sizes[d];
        }
        const Sizes strides = contiguousStrides(shape);
        std::int64_t at = 0;
        for (const Value* t : list) {
          Layout place;
          place.offset = at * strides[d];
          place.sizes = t->t.sizes;
          place.strides = strides;
          pieces.push_back(*t);
          placements.push_back(place);
          at += t->t.sizes[d];
        }
      }
    }
    const std::int64_t total = numelOf(shape);
    std::vector<std::vector<std::int64_t>> maps;
    for (const Layout& place : placements) {
      std::vector<std::int64_t> map;
      Sizes idx(place.sizes.size(), 0);
      const std::int64_t n = numelOf(place.sizes);
      charge(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
      for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t pos = place.offset;
        for (std::size_t d = 0; d < idx.size(); ++d) pos += idx[d] * place.strides[d];
        if (pos < 0 || pos >= total) fail("internal: piece outside the output");
        map.push_back(pos);
        advanceRowMajor(idx, place.sizes);
      }
      maps.push_back(std::move(map));
    }
    std::vector<z3::expr> out =
        startFromSelf ? operandOwnShape(call.arg("self"), "self")
                      : std::vector<z3::expr>(static_cast<std::size_t>(std::max<std::int64_t>(total, 0)), bv(0));
    std::vector<std::vector<z3::expr>> pieceElements;
    for (const Value& p : pieces) pieceElements.push_back(operandOwnShape(p, "piece"));
    for (std::size_t k = 0; k < maps.size(); ++k)
      for (std::size_t e = 0; e < maps[k].size(); ++e) out[static_cast<std::size_t>(maps[k][e])] = pieceElements[k][e];
    return finishSingle(call, shape, out);
  }

  Value compileForeach(const Call& call) {
    const OpKind kind = call.op.kind;
    const Value& self = call.arg("self");
    if (self.kind != Value::Kind::List) fail("foreach: self must be a list");
    const bool hasList = call.has("other");
    const Value& other = hasList ? call.arg("other") : call.arg("scalar");
    if (hasList && (other.kind != Value::Kind::List || other.items.size() != self.items.size()))
      fail("foreach: list lengths differ");
    const Value* alphaArg = call.find("alpha");
    const std::uint64_t alpha = alphaArg ? asScalar(*alphaArg) : 1;
    const bool writes = call.op.inplace;
    Value results;
    results.kind = Value::Kind::List;
    for (std::size_t j = 0; j < self.items.size(); ++j) {
      const Value& item = self.items[j];
      const Value& otherItem = hasList ? other.items[j] : other;
      const Layout& a = tensorArg(item, "self");
      const Sizes shape = writes ? a.sizes : broadcastShapes(a.sizes, shapeOf(otherItem));
      const std::vector<z3::expr> x = operandOf(item, shape), y = operandOf(otherItem, shape);
      std::vector<z3::expr> out;
      for (std::size_t e = 0; e < x.size(); ++e) {
        if (kind == OpKind::ForeachAdd) out.push_back(arith("add", x[e], y[e], alpha));
        else if (kind == OpKind::ForeachSub) out.push_back(arith("sub", x[e], y[e], alpha));
        else out.push_back(v_.function("mul", {v_.element(), v_.element()}, v_.element())(x[e], y[e]));
      }
      if (writes) {
        write(a, out);
      } else {
        Value v;
        v.kind = Value::Kind::Tensor;
        v.t = fresh(shape);
        write(v.t, out);
        results.items.push_back(v);
      }
    }
    if (writes) return {};
    return results;
  }

  // --- the end: end writes and observations ---

  // The oracle's observation of a value: a tensor's elements, a list's tensors' elements in
  // order (other items are not observed), an opaque digest, or a literal's constant.
  void observe(const Value& v, std::vector<z3::expr>& out) {
    switch (v.kind) {
      case Value::Kind::Tensor: {
        std::vector<z3::expr> e = read(v.t);
        out.insert(out.end(), e.begin(), e.end());
        break;
      }
      case Value::Kind::List:
        for (const Value& item : v.items)
          if (item.isTensor() || item.kind == Value::Kind::List) observe(item, out);
        break;
      case Value::Kind::Opaque: out.push_back(*v.opaque); break;
      case Value::Kind::Int:
      case Value::Kind::Bool: out.push_back(literal_(bv(1), bv(static_cast<std::uint64_t>(v.i)))); break;
      case Value::Kind::Float: out.push_back(literal_(bv(2), bv(scalarBits(v.f)))); break;
      case Value::Kind::Text: out.push_back(literal_(bv(3), bv(static_cast<std::uint64_t>(v.i)))); break;
      case Value::Kind::None: out.push_back(bv(0)); break;
    }
  }

  SymbolicRun finish() {
    const Signature& sig = program_.signature;
    const std::span<const Arg> returned = program_.graph.returnedArgs();
    SymbolicRun run;
    run.tier = oracle::Tier::Element;
    // Placeholders (their targets) by name, for mutation specs.
    auto targetOf = [&](std::size_t pos) -> std::optional<std::size_t> {
      if (const InputSpec* in = sig.mutatedInput(sig.outputs[pos]))
        if (std::optional<std::size_t> node = program_.graph.indexOf(in->name)) return node;
      return std::nullopt;
    };
    // Visible outputs are resolved before the end writes (the oracle's compileEnd makes their
    // sources first; their elements are read after the ending).
    struct Output {
      std::string label;
      Value value;
    };
    std::vector<Output> outputs;
    for (std::size_t pos : visibleOutputPositions(program_)) {
      Output o;
      o.label = "output " + std::to_string(outputs.size());
      if (returned[pos].isRef()) o.label += " (%" + program_.graph.nodes[returned[pos].node].name + ")";
      o.value = resolve(returned[pos]);
      if (!options_.placed && pos < sig.outputs.size() && sig.outputs[pos].kind == OutputKind::UserInputMutation)
        if (std::optional<std::size_t> target = targetOf(pos)) o.value = *declared_[*target];
      outputs.push_back(std::move(o));
    }
    if (!options_.placed) {
      struct EndWrite {
        Layout target;
        std::vector<z3::expr> value;
      };
      std::vector<EndWrite> writes;
      for (std::size_t pos = 0; pos < sig.outputs.size() && pos < returned.size(); ++pos) {
        const OutputSpec& spec = sig.outputs[pos];
        if (!isMutation(spec.kind)) continue;
        const std::optional<std::size_t> target = targetOf(pos);
        if (!target) fail("mutation output " + spec.name + " has no target placeholder");
        const Value v = resolve(returned[pos]);
        const Layout& t = declared_[*target]->t;
        if (!v.isTensor()) fail("mutation value of " + spec.target + " is not a tensor");
        writes.push_back({t, read(expandTo(v.t, t.sizes))});  // S_par: every value read first
      }
      for (const EndWrite& w : writes) write(w.target, w.value);
    }
    for (std::size_t i = 0; i < program_.graph.nodes.size(); ++i) {
      if (!program_.graph.nodes[i].isPlaceholder()) continue;
      SymbolicObservation o;
      o.label = program_.graph.nodes[i].name;
      o.values = storages_[declared_[i]->t.storage].elements;
      run.placeholders.push_back(std::move(o));
    }
    for (const Output& out : outputs) {
      SymbolicObservation o;
      o.label = out.label;
      observe(out.value, o.values);
      run.outputs.push_back(std::move(o));
    }
    run.dependsOnViewMode = viewModeSeen_;
    return run;
  }
};

}  // namespace

Result<SymbolicRun> executeElement(const Program& program, const SchemaTable& schemas, const NodeKeys& keys,
                                   Vocabulary& vocabulary, const SymbolicOptions& options) {
  return ElementExecutor(program, schemas, keys, vocabulary, options).run();
}

}  // namespace wb::proofs::detail
