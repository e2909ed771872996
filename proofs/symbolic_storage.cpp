// proofs/symbolic_storage.cpp: the storage tier of the symbolic executor (see symbolic.h).
//
// Mirrors oracle/storage.cpp: one digest per root, values as a root and a static view path.
// Where the oracle combines a value with a constant of its own (a view step, a channel, an
// op's seed), this applies an uninterpreted function named for that purpose to an id of the
// constant, so that each function here stands for one function of the oracle's: a proof over
// every interpretation covers the oracle's.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "proofs/op_model.h"
#include "proofs/smt.h"
#include "proofs/symbolic_internal.h"

namespace wb::proofs::detail {

namespace {

struct Unsupported {
  std::string why;
};

struct SValue {
  enum class Kind : std::uint8_t { Constant, View, Slot, List, Choice };
  Kind kind = Kind::Constant;
  std::optional<z3::expr> term;  // Constant: its value; Slot: its value
  std::string constant = "N";    // Constant: its descriptor (the oracle's constantPart)
  std::uint32_t root = 0;
  std::uint32_t path = 0;  // interned; 0 = the whole storage
  std::vector<SValue> items;
  std::vector<z3::expr> guards;  // Choice: one per item (exclusive)
};

// A root's state: its digest, and the last write through a view (the oracle's lastPath and
// lastValue). Which write was last depends on data where a write is guarded (a schema-less op
// may or may not write), so the last path is a term: the id of the path (pathId), or 0 when no
// view write counts since the last whole write; `knownPath` is its path index (0: none) while
// it does not depend on data. One term per root, whatever the number of guarded writes: a read
// through path p asks which prefix of p the last path is, at most |p| alternatives.
struct RootState {
  z3::expr digest;
  z3::expr lastPath, lastValue;
  std::optional<std::uint32_t> knownPath;
};

class StorageExecutor {
 public:
  StorageExecutor(const Program& program, const SchemaTable& schemas, const NodeKeys& keys, Vocabulary& vocabulary,
                  const SymbolicOptions& options)
      : program_(program),
        schemas_(schemas),
        keys_(keys),
        v_(vocabulary),
        options_(options),
        step_(v_.function("step", {v_.element(), v_.element()}, v_.element())),
        viewWrite_(v_.function("view-write", {v_.element(), v_.element(), v_.element()}, v_.element())),
        written_(v_.function("written", {v_.element(), v_.element()}, v_.element())),
        slotOf_(v_.function("slot", {v_.element(), v_.element()}, v_.element())),
        literal_(v_.function("literal", {v_.element(), v_.element()}, v_.element())) {
    paths_.push_back({});
  }

  Result<SymbolicRun> run() {
    try {
      walk();
      return Result<SymbolicRun>::success(finish());
    } catch (const Unsupported& u) {
      Diagnostic d;
      d.file = "<symbolic storage tier>";
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
  z3::func_decl step_, viewWrite_, written_, slotOf_, literal_;
  std::vector<std::vector<std::uint64_t>> paths_;  // step ids; paths_[0] is empty
  std::map<std::vector<std::uint64_t>, std::uint32_t> pathIndex_;
  std::vector<RootState> roots_;
  std::vector<SValue> values_, declared_;
  std::vector<bool> keptViewCopy_;
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> getitemUsers_;
  std::size_t current_ = 0;
  std::size_t work_ = 0;
  bool viewModeSeen_ = false;

  z3::expr bv(std::uint64_t x) const { return v_.bv(x); }

  // One read, write or view of a value (an alternative of a choice counts as one): the work of a
  // run, bounded as the element tier bounds its element terms. The alternatives of a value
  // double along a chain of ops without a schema that take each other's results, and the
  // terms Z3 shares need not grow with them: the work bound stops such a run, the memory
  // bound one whose terms do grow.
  void charge() {
    if (++work_ > options_.maxElements)
      throw Unsupported{"more than " + std::to_string(options_.maxElements) +
                        " reads, writes and views of values (SymbolicOptions::maxElements); the symbolic storage tier stops here"};
    if (work_ % 4096 == 0 && options_.memoryMb > 0 && z3MemoryMb() > options_.memoryMb)
      throw Unsupported{"Z3 memory above " + std::to_string(options_.memoryMb) +
                        " MB (SmtOptions::memoryMb); the symbolic storage tier stops here"};
  }
  z3::expr yes() const { return v_.ctx().bool_val(true); }
  const std::string& key() const { return keys_.nodes[current_]; }

  std::uint32_t internPath(const std::vector<std::uint64_t>& p) {
    if (p.empty()) return 0;
    auto [it, inserted] = pathIndex_.emplace(p, static_cast<std::uint32_t>(paths_.size()));
    if (inserted) paths_.push_back(p);
    return it->second;
  }
  std::uint64_t stepId(const std::string& descriptor) { return v_.textId("step|" + descriptor); }

  SValue freshRoot(const z3::expr& digest) {
    SValue v;
    v.kind = SValue::Kind::View;
    v.root = static_cast<std::uint32_t>(roots_.size());
    roots_.push_back({digest, bv(0), bv(0), 0u});
    return v;
  }
  SValue constantZero() const {
    SValue v;
    v.term = bv(0);
    return v;
  }
  SValue slot(const z3::expr& term) {
    SValue v;
    v.kind = SValue::Kind::Slot;
    v.term = term;
    return v;
  }

  SValue viewOf(const SValue& base, std::uint64_t id) {
    charge();
    if (base.kind == SValue::Kind::Choice) {
      SValue c = base;
      for (SValue& item : c.items) item = viewOf(item, id);
      return c;
    }
    if (base.kind != SValue::Kind::View) return base;
    SValue v = base;
    std::vector<std::uint64_t> p = paths_[base.path];
    p.push_back(id);
    v.path = internPath(p);
    return v;
  }

  z3::expr fold(z3::expr v, const std::vector<std::uint64_t>& steps, std::size_t from) {
    for (std::size_t i = from; i < steps.size(); ++i) v = step_(v, bv(steps[i]));
    return v;
  }

  // The id of a path in terms (shared by the programs of a query); 0 is no path.
  std::uint64_t pathId(std::uint32_t path) { return v_.textId("path|" + pathText(path)); }

  z3::expr readRoot(std::uint32_t root, std::uint32_t path) {
    const RootState& st = roots_[root];
    if (path == 0) return st.digest;
    const std::vector<std::uint64_t> p = paths_[path];
    if (st.knownPath) {
      if (*st.knownPath != 0) {
        const std::vector<std::uint64_t>& lp = paths_[*st.knownPath];
        if (lp.size() <= p.size() && std::equal(lp.begin(), lp.end(), p.begin())) return fold(st.lastValue, p, lp.size());
      }
      return fold(st.digest, p, 0);
    }
    z3::expr result = fold(st.digest, p, 0);
    for (std::size_t j = 1; j <= p.size(); ++j) {
      const std::uint32_t prefix = internPath(std::vector<std::uint64_t>(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(j)));
      result = z3::ite(st.lastPath == bv(pathId(prefix)), fold(st.lastValue, p, j), result);
    }
    return result;
  }

  z3::expr read(const SValue& v) {
    charge();
    switch (v.kind) {
      case SValue::Kind::Constant:
      case SValue::Kind::Slot: return *v.term;
      case SValue::Kind::View: return readRoot(v.root, v.path);
      case SValue::Kind::List: {
        std::vector<z3::sort> domain(v.items.size(), v_.element());
        z3::expr_vector args(v_.ctx());
        for (const SValue& item : v.items) args.push_back(read(item));
        return v_.function("list|" + std::to_string(v.items.size()), domain, v_.element())(args);
      }
      case SValue::Kind::Choice: {
        // The last alternative is the one taken when no guard holds (a fresh result).
        z3::expr result = read(v.items.back());
        for (std::size_t k = v.items.size() - 1; k-- > 0;) result = z3::ite(v.guards[k], read(v.items[k]), result);
        return result;
      }
    }
    return bv(0);
  }

  // The oracle's write(target, value), under `guard` (true for an unconditional one).
  void write(const SValue& target, const z3::expr& value, const z3::expr& guard) {
    charge();
    if (target.kind == SValue::Kind::Choice) {
      for (std::size_t k = 0; k < target.items.size(); ++k) {
        const z3::expr g = k + 1 < target.items.size() ? target.guards[k] : notAny(target);
        write(target.items[k], value, guard && g);
      }
      return;
    }
    if (target.kind != SValue::Kind::View) return;
    RootState& st = roots_[target.root];
    const bool always = guard.is_true();
    if (target.path == 0) {
      // A root written with the contents it holds keeps its last view write readable.
      if (z3::eq(st.digest, value)) return;
      const bool noViewWrite = st.knownPath && *st.knownPath == 0;
      if (!noViewWrite) {
        const z3::expr forget = always ? st.digest != value : guard && st.digest != value;
        st.lastPath = z3::ite(forget, bv(0), st.lastPath);
        st.knownPath.reset();
      }
      st.digest = always ? value : z3::ite(guard, value, st.digest);
      return;
    }
    const z3::expr digest = viewWrite_(st.digest, bv(pathId(target.path)), value);
    const z3::expr id = bv(pathId(target.path));
    if (always) {
      st = RootState{digest, id, value, target.path};
      return;
    }
    st.digest = z3::ite(guard, digest, st.digest);
    if (!(st.knownPath && *st.knownPath == target.path)) st.knownPath.reset();
    st.lastPath = z3::ite(guard, id, st.lastPath);
    st.lastValue = z3::ite(guard, value, st.lastValue);
  }

  std::string pathText(std::uint32_t path) const {
    std::string s;
    for (std::uint64_t id : paths_[path]) s += std::to_string(id) + ".";
    return s;
  }

  z3::expr notAny(const SValue& choice) const {
    z3::expr none = yes();
    for (const z3::expr& g : choice.guards) none = none && !g;
    return none;
  }

  // --- arguments ---

  SValue literal(const Arg& a) {
    SValue v;
    switch (a.kind) {
      case Arg::Kind::Bool:
      case Arg::Kind::Int: {
        const std::int64_t i = a.kind == Arg::Kind::Bool ? a.boolean : a.integer;
        v.term = literal_(bv(1), bv(static_cast<std::uint64_t>(i)));
        v.constant = "I" + std::to_string(i);
        return v;
      }
      case Arg::Kind::Float:
        v.term = literal_(bv(2), bv(scalarBits(a.real)));
        v.constant = "F" + std::to_string(scalarBits(a.real));
        return v;
      case Arg::Kind::String:
      case Arg::Kind::Token:
        v.term = literal_(bv(3), bv(textBits(a.text)));
        v.constant = "S" + std::to_string(textBits(a.text));
        return v;
      default:
        v.term = bv(0);
        v.constant = "N";
        return v;
    }
  }

  SValue resolve(const Arg& a) {
    if (a.isRef()) return values_.at(a.node);
    if (a.isSequence()) {
      SValue v;
      v.kind = SValue::Kind::List;
      for (const Arg& item : a.items) v.items.push_back(resolve(item));
      return v;
    }
    return literal(a);
  }

  // Every tensor (view, slot, or choice of views) inside a value, flattened.
  static void views(const SValue& v, std::vector<SValue>& out) {
    if (v.kind == SValue::Kind::View || v.kind == SValue::Kind::Slot || v.kind == SValue::Kind::Choice) out.push_back(v);
    else if (v.kind == SValue::Kind::List)
      for (const SValue& item : v.items) views(item, out);
  }

  // The oracle's constantPart, as a descriptor.
  static std::string constantPart(const SValue& v) {
    switch (v.kind) {
      case SValue::Kind::Constant: return v.constant;
      case SValue::Kind::List: {
        std::string s = "L" + std::to_string(v.items.size()) + "(";
        for (const SValue& item : v.items) s += constantPart(item) + ",";
        return s + ")";
      }
      default: return "7";
    }
  }

  // A digest of reads: the oracle's hashOfReads(seed, inputs), its seed named by `seed`.
  z3::expr hashOfReads(const std::string& seed, const std::vector<SValue>& inputs) {
    std::vector<z3::sort> domain(inputs.size(), v_.element());
    z3::expr_vector args(v_.ctx());
    for (const SValue& in : inputs) args.push_back(read(in));
    return v_.function("hash|" + seed, domain, v_.element())(args);
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
        case NodeOp::Placeholder:
          values_[i] = freshRoot(v_.input(key(), n.name, false, 1).term);
          declared_[i] = values_[i];
          break;
        case NodeOp::GetAttr: values_[i] = freshRoot(v_.constant("get_attr:" + std::string(n.target))); break;
        case NodeOp::CallFunction:
        case NodeOp::CallModule: values_[i] = compileCall(n); break;
        case NodeOp::Output: break;
      }
      if (options_.memoryMb > 0 && z3MemoryMb() > options_.memoryMb) throw Unsupported{"Z3 memory above " + std::to_string(options_.memoryMb) + " MB after node %" + n.name + " (SmtOptions::memoryMb); the symbolic storage tier stops here"};
    }
  }

  std::size_t listLength() const {
    std::size_t count = 0;
    for (const auto& [user, element] : getitemUsers_[current_])
      if (element >= 0) count = std::max(count, static_cast<std::size_t>(element) + 1);
    return count;
  }

  SValue compileCall(const Node& n) {
    const OpModel op = modelOf(n, schemas_);
    if (op.getitem) {
      if (n.args.size() < 2) return constantZero();
      const SValue container = resolve(n.args[0]);
      std::int64_t i = n.args[1].kind == Arg::Kind::Int ? n.args[1].integer : 0;
      if (container.kind == SValue::Kind::List) {
        const std::int64_t size = static_cast<std::int64_t>(container.items.size());
        if (i < 0) i += size;
        if (i >= 0 && i < size) return container.items[static_cast<std::size_t>(i)];
        return constantZero();
      }
      const std::uint64_t id = stepId("getitem|" + std::to_string(i));
      if (container.kind == SValue::Kind::Slot) return slot(slotOf_(*container.term, bv(id)));
      return viewOf(container, id);
    }
    const std::string target(n.target);
    if (!op.schema) return compileSchemaless(n);
    const Schema& s = *op.schema;
    Bound bound = bindArguments(n, s);
    if (!bound.error.empty()) {  // arguments that do not fit: read all, fresh result
      std::vector<SValue> inputs;
      for (const Arg& a : n.args) views(resolve(a), inputs);
      for (const auto& [name, a] : n.kwargs) views(resolve(a), inputs);
      return freshRoot(hashOfReads(target + "|unbound", inputs));
    }
    std::vector<SValue> args;
    for (const Arg& a : bound.args) args.push_back(resolve(a));
    std::string literals;
    bool hasLiterals = false;
    for (std::size_t k = 0; k < args.size(); ++k)
      if (!s.arguments[k].type.isTensor()) {
        literals += constantPart(args[k]) + ",";
        hasLiterals = true;
      }

    if (isView(op.kind) && !op.outVariant && !args.empty()) {
      const bool identity = op.kind == OpKind::Alias || op.kind == OpKind::Contiguous;
      if (op.copyVariant) viewModeSeen_ = true;
      const bool copy = op.copyVariant && (options_.viewMode == oracle::ViewMode::CopyViews ||
                                           (s.name == "view_copy" && keptViewCopy_[current_]));
      const SValue self = args[s.argumentIndex("self").value_or(0)];
      // The oracle's step: the view's kind, and its op and literals when it has any.
      const std::string step = std::to_string(static_cast<int>(op.kind)) + (hasLiterals ? "|" + target + "|" + literals : "");
      auto makeView = [&](const std::string& descriptor) -> SValue {
        const std::uint64_t id = stepId(descriptor);
        if (!copy) return identity ? self : viewOf(self, id);
        if (identity) return freshRoot(read(self));
        return freshRoot(step_(read(self), bv(id)));
      };
      if (!isListView(op.kind)) return makeView(step);
      SValue list;
      list.kind = SValue::Kind::List;
      const std::size_t count = listLength();
      for (std::size_t i = 0; i < count; ++i) list.items.push_back(makeView(step + "#" + std::to_string(i)));
      return list;
    }
    if (op.kind == OpKind::SymSize) {
      std::string shapeOf = literals;
      for (const SValue& a : args) shapeOf += (a.kind == SValue::Kind::View ? pathText(a.path) : std::string("0")) + ";";
      return slot(v_.constant("sym_size|" + target + "|" + shapeOf));
    }

    const bool copyLike = op.kind == OpKind::Copy || op.kind == OpKind::Clone;
    std::vector<SValue> inputs;
    if (copyLike) {
      const std::size_t from = s.argumentIndex(op.kind == OpKind::Copy ? "src" : "self").value_or(0);
      if (from < args.size()) inputs.push_back(args[from]);
    } else {
      for (std::size_t k = 0; k < args.size(); ++k)
        if (s.arguments[k].type.isTensor()) views(args[k], inputs);
    }
    const z3::expr value = copyLike ? (inputs.empty() ? bv(0) : read(inputs[0])) : hashOfReads(target + "|" + literals, inputs);
    auto writtenValue = [&](const std::string& channel) { return copyLike ? value : written_(value, bv(v_.textId("channel|" + channel))); };

    for (std::size_t k = 0; k < args.size(); ++k) {
      if (!s.arguments[k].type.isWrite()) continue;
      if (args[k].kind == SValue::Kind::List) {
        for (std::size_t j = 0; j < args[k].items.size(); ++j)
          write(args[k].items[j], writtenValue(std::to_string(k) + "." + std::to_string(j)), yes());
      } else {
        write(args[k], writtenValue(std::to_string(k)), yes());
      }
    }

    std::vector<SValue> results;
    for (std::size_t r = 0; r < s.returns.size(); ++r) {
      const SchemaType& type = s.returns[r].type;
      std::optional<std::size_t> aliased;
      for (std::size_t k = 0; k < s.arguments.size(); ++k)
        if (sameAliasSet(type, s.arguments[k].type)) aliased = k;
      if (!type.isTensor()) {
        results.push_back(slot(writtenValue("return " + std::to_string(r))));
      } else if (type.isList && !aliased) {
        SValue list;
        list.kind = SValue::Kind::List;
        const std::size_t count = listLength();
        for (std::size_t i = 0; i < count; ++i)
          list.items.push_back(freshRoot(writtenValue("return " + std::to_string(r) + "." + std::to_string(i))));
        results.push_back(list);
      } else if (aliased && s.arguments[*aliased].type.isWrite()) {
        results.push_back(args[*aliased]);
      } else if (aliased) {
        results.push_back(viewOf(args[*aliased], stepId("alias-return|" + target + "|" + literals + "|" + std::to_string(r))));
      } else {
        results.push_back(freshRoot(writtenValue("return " + std::to_string(r))));
      }
    }
    SValue result;
    if (results.size() == 1) {
      result = results[0];
    } else if (results.size() > 1) {
      result.kind = SValue::Kind::List;
      result.items = std::move(results);
    } else {
      result.term = bv(0);
    }
    const std::optional<int> share = n.shareAllocArgIndex();
    if (share && result.kind == SValue::Kind::View && *share >= 0 && static_cast<std::size_t>(*share) < n.args.size()) {
      const SValue base = resolve(n.args[static_cast<std::size_t>(*share)]);
      if (base.kind == SValue::Kind::View) {
        write(base, read(result), yes());
        result = base;
      }
    }
    return result;
  }

  // Havoc (DESIGN §5), never pure: every tensor argument read; under the node's choices, each
  // argument written (through its view or whole), and the result an alias of an argument
  // (itself, or a view of it). The oracle's behaviour draws (oracle.h: HavocBehaviour) are some
  // of those choices; its draw 0 (reads only, a fresh result) is the one the solver is asked
  // about first (proofs/equivalence.h).
  SValue compileSchemaless(const Node& n) {
    std::vector<SValue> inputs;
    std::string seed = std::string(n.target) + "|";
    for (const Arg& a : n.args) {
      const SValue v = resolve(a);
      views(v, inputs);
      seed += constantPart(v) + ",";
    }
    for (const auto& [name, a] : n.kwargs) {
      const SValue v = resolve(a);
      views(v, inputs);
      seed += "kw:" + name + "=" + constantPart(v) + ",";
    }
    const z3::expr digest = hashOfReads(seed, inputs);
    std::vector<z3::expr> reads;
    for (const SValue& in : inputs) reads.push_back(read(in));
    std::vector<SValue> tensors;
    for (const SValue& in : inputs)
      if (in.kind != SValue::Kind::Slot) tensors.push_back(in);
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      std::vector<z3::sort> domain(reads.size(), v_.element());
      z3::expr_vector args(v_.ctx());
      for (const z3::expr& r : reads) args.push_back(r);
      const z3::expr value = v_.function("havoc-write|" + seed + "|" + std::to_string(k), domain, v_.element())(args);
      const z3::expr writes = v_.writeChoice(key(), k);
      const z3::expr whole = v_.writeChoice(key(), 100000 + k);
      write(tensors[k], value, writes && !whole);
      write(wholeOf(tensors[k]), value, writes && whole);
    }
    SValue fresh = freshRoot(digest);
    if (tensors.empty()) return fresh;
    std::size_t alternatives = 1;
    for (const SValue& t : tensors) alternatives += 2 * leaves(t);
    if (alternatives > kMaxAlternatives)
      throw Unsupported{"%" + n.name + " may denote " + std::to_string(alternatives) +
                        " storages (ops without a schema that take each other's results); the symbolic storage "
                        "tier stops at " + std::to_string(kMaxAlternatives)};
    const z3::expr choice = v_.resultChoice(key());
    SValue result;
    result.kind = SValue::Kind::Choice;
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      result.items.push_back(tensors[k]);
      result.guards.push_back(choice == v_.ctx().bv_val(2 * k + 1, 8));
      result.items.push_back(viewOf(tensors[k], stepId("havoc-view|" + key() + "|" + std::to_string(k))));
      result.guards.push_back(choice == v_.ctx().bv_val(2 * k + 2, 8));
    }
    result.items.push_back(fresh);
    return result;
  }

  // Alternatives of a value a schema-less op's result may be (they double along a chain of
  // such ops, and every read, write and copy of the value visits each).
  static constexpr std::size_t kMaxAlternatives = 1024;
  static std::size_t leaves(const SValue& v) {
    if (v.kind != SValue::Kind::Choice && v.kind != SValue::Kind::List) return 1;
    std::size_t n = 0;
    for (const SValue& item : v.items) n += leaves(item);
    return n;
  }

  // The whole storage of every root a value may denote.
  static SValue wholeOf(SValue v) {
    if (v.kind == SValue::Kind::View) v.path = 0;
    for (SValue& item : v.items) item = wholeOf(item);
    return v;
  }

  SymbolicRun finish() {
    const Signature& sig = program_.signature;
    const std::span<const Arg> returned = program_.graph.returnedArgs();
    auto targetOf = [&](std::size_t pos) -> std::optional<std::size_t> {
      if (const InputSpec* in = sig.mutatedInput(sig.outputs[pos]))
        if (std::optional<std::size_t> node = program_.graph.indexOf(in->name)) return node;
      return std::nullopt;
    };
    std::vector<std::pair<std::string, SValue>> outputs;
    for (std::size_t pos : visibleOutputPositions(program_)) {
      std::string label = "output " + std::to_string(outputs.size());
      if (returned[pos].isRef()) label += " (%" + program_.graph.nodes[returned[pos].node].name + ")";
      SValue v = resolve(returned[pos]);
      if (!options_.placed && pos < sig.outputs.size() && sig.outputs[pos].kind == OutputKind::UserInputMutation)
        if (std::optional<std::size_t> t = targetOf(pos)) v = declared_[*t];
      outputs.emplace_back(std::move(label), std::move(v));
    }
    if (!options_.placed) {
      std::vector<std::pair<SValue, z3::expr>> writes;
      for (std::size_t pos = 0; pos < sig.outputs.size() && pos < returned.size(); ++pos) {
        if (!isMutation(sig.outputs[pos].kind)) continue;
        const std::optional<std::size_t> t = targetOf(pos);
        if (!t) continue;
        writes.emplace_back(declared_[*t], read(resolve(returned[pos])));
      }
      for (const auto& [target, value] : writes) write(target, value, yes());
    }
    SymbolicRun run;
    run.tier = oracle::Tier::Storage;
    for (std::size_t i = 0; i < program_.graph.nodes.size(); ++i) {
      if (!program_.graph.nodes[i].isPlaceholder()) continue;
      run.placeholders.push_back({program_.graph.nodes[i].name, {roots_[declared_[i].root].digest}});
    }
    for (const auto& [label, value] : outputs) run.outputs.push_back({label, {read(value)}});
    run.dependsOnViewMode = viewModeSeen_;
    return run;
  }
};

}  // namespace

Result<SymbolicRun> executeStorage(const Program& program, const SchemaTable& schemas, const NodeKeys& keys,
                                   Vocabulary& vocabulary, const SymbolicOptions& options) {
  return StorageExecutor(program, schemas, keys, vocabulary, options).run();
}

}  // namespace wb::proofs::detail
