// oracle/storage.cpp: the storage tier (DESIGN §7): shape-free, one 64-bit digest per root.
//
// Used only where shapes are unknown (most printed real graphs). Every storage root (a
// placeholder, a get_attr, a fresh result) holds a digest. A value is a root plus a static view
// path (the sequence of view steps from the root). Semantics:
// - read(root, path) = fold(H, digest, path steps), except that reading through the path of
//   the last write through a view (or an extension of it) yields the value written (folded
//   with the remaining steps), so a write followed by a read of the same view behaves;
// - write(root, path, v) stores v when the path is empty (the whole storage), otherwise
//   H(old digest, path, v);
// - a fresh result's digest is H(op, constant arguments, reads of every tensor argument);
//   copy_, copy, clone and the `_to_copy` family yield exactly the value read, so inserted
//   copies and clones do not perturb the comparison;
// - an op writing argument k (in-place, out=, Tensor(a!)[] lists, mutable custom ops) writes
//   H(value, k) there (copy_: the value itself); `_share_alloc_with_arg_idx = k` writes the
//   result into argument k's storage and the result is a view of it;
// - schema-less targets read every tensor argument and then do what the run's behaviour draw
//   says (oracle.h: HavocBehaviour; draw 0, and always under F: write none and give a fresh
//   root), as in the element tier (oracle/element/compiler.h).
// The value model (F) gives every node a fresh root: a view's root holds the fold of the read;
// a written argument that is not an in-place-kind op's returned self is rebound to a fresh
// root holding the written value (oracle.h).
// Coarser than the element tier: disjoint views of one root interfere.
#include <algorithm>
#include <span>
#include <map>
#include <unordered_map>

#include "oracle/ops.h"

namespace wb::oracle::detail {

namespace {

using Path = std::vector<std::uint64_t>;

struct SValue {
  enum class Kind : std::uint8_t { Constant, View, Slot, List };
  Kind kind = Kind::Constant;
  std::uint64_t constant = 0;
  std::uint32_t root = 0;
  std::uint32_t path = 0;  // index into the interned paths; 0 = the whole storage
  std::uint32_t slot = 0;
  std::vector<SValue> items;
};

// A run's state, laid flat over one buffer (see stateOver): per root its digest, the path of
// its last write through a view (kNoPath: none) and the value written there; then the slots
// (non-tensor values). One buffer, so that runs reuse a scratch buffer and a snapshot (for
// several endings) is one copy.
constexpr std::uint64_t kNoPath = ~std::uint64_t{0};

struct SState {
  std::uint64_t* digest = nullptr;     // per root
  std::uint64_t* lastPath = nullptr;   // per root
  std::uint64_t* lastValue = nullptr;  // per root
  std::uint64_t* slots = nullptr;
  std::uint64_t seed = 0;
  int inputSet = 0;
  const InputValues* values = nullptr;  // explicit digests of some placeholders (element 0)

  // Placeholder `name`'s initial digest.
  std::uint64_t input(const std::string& name, std::uint64_t nameHash) const {
    if (values)
      if (auto it = values->byName.find(name); it != values->byName.end() && !it->second.empty()) return it->second[0];
    return inputElement(seed, inputSet, nameHash, 0);
  }
};

// A step: a value computed from the state, stored in a root, a slot or through a view. Steps
// are plain records interpreted by one switch (StorageProgram::runStep): a compile allocates
// its step and operand lists, not a closure per step.
enum class SCompute : std::uint8_t {
  Input,        // placeholders[from]'s initial digest (a: the hash of its name)
  Constant,     // a
  Fold,         // a folded with the reads of the operands
  LastRead,     // the read of the last operand (0 with none): copies
  Slot,         // slots[from]
  SlotCombine,  // combine(slots[from], a)
  Read,         // the read of the operand
  ReadCombine,  // combine(the read of the operand, a)
};
enum class SDest : std::uint8_t {
  Root,   // digest[index] (the whole storage: no view write remembered)
  Slot,   // slots[index]
  Write,  // written through operands[index] (see StorageProgram::write)
};
struct SStep {
  SCompute compute = SCompute::Constant;
  SDest dest = SDest::Slot;
  std::uint32_t index = 0;
  std::uint32_t from = 0;
  std::uint32_t operandsAt = 0, operandsCount = 0;  // into StorageProgram::operands
  std::uint64_t a = 0;
};

struct SEndWrite {
  SValue target, value;
};

}  // namespace

struct StorageProgram {
  bool dependsOnViewMode = false;  // some `*_copy` view variant was compiled
  std::vector<Path> paths;  // interned; paths[0] is empty
  std::size_t roots = 0, slots = 0;
  // Every node's steps in one list, in graph order: node n's are [nodeStepEnd[n - 1],
  // nodeStepEnd[n]) (from 0 for the first).
  std::vector<SStep> steps;
  std::vector<SValue> operands;  // what the steps read, and the targets of their writes
  std::vector<std::uint32_t> nodeStepEnd;
  std::vector<SValue> nodeValues;
  std::vector<std::pair<std::string, std::uint32_t>> placeholders;  // label, root
  std::vector<std::pair<std::string, SValue>> referenceOutputs, placedOutputs;
  std::vector<SEndWrite> endWrites;

  std::uint64_t read(const SState& st, std::uint32_t root, std::uint32_t path) const {
    if (path == 0) return st.digest[root];
    const Path& p = paths[path];
    const std::uint64_t last = st.lastPath[root];
    if (last != kNoPath) {
      const Path& lp = paths[last];
      if (lp.size() <= p.size() && std::equal(lp.begin(), lp.end(), p.begin())) {
        std::uint64_t v = st.lastValue[root];
        for (std::size_t i = lp.size(); i < p.size(); ++i) v = combine(v, p[i]);
        return v;
      }
    }
    std::uint64_t v = st.digest[root];
    for (std::uint64_t step : p) v = combine(v, step);
    return v;
  }

  std::uint64_t read(const SState& st, const SValue& v) const {
    switch (v.kind) {
      case SValue::Kind::Constant: return v.constant;
      case SValue::Kind::View: return read(st, v.root, v.path);
      case SValue::Kind::Slot: return st.slots[v.slot];
      case SValue::Kind::List: {
        std::uint64_t h = 0x4c495354;
        for (const SValue& item : v.items) h = combine(h, read(st, item));
        return h;
      }
    }
    return 0;
  }

  void write(SState& st, const SValue& target, std::uint64_t value) const {
    if (target.kind != SValue::Kind::View) return;
    if (target.path == 0) {
      // A root written with the contents it holds is unchanged, and so are its views: the last
      // view write stays readable. (S_par's end write of a buffer whose mutation value is the
      // buffer itself is such a write; forgetting the view write there made a view of the
      // buffer read differently in S_par than in the placed run, which has no end writes.)
      if (st.digest[target.root] == value) return;
      st.digest[target.root] = value;
      st.lastPath[target.root] = kNoPath;
      return;
    }
    std::uint64_t pathHash = 0;
    for (std::uint64_t step : paths[target.path]) pathHash = combine(pathHash, step);
    st.digest[target.root] = combine(combine(st.digest[target.root], pathHash), value);
    st.lastPath[target.root] = target.path;
    st.lastValue[target.root] = value;
  }

  std::uint64_t compute(const SState& st, const SStep& s) const {
    const SValue* in = operands.data() + s.operandsAt;
    switch (s.compute) {
      case SCompute::Input: return st.input(placeholders[s.from].first, s.a);
      case SCompute::Constant: return s.a;
      case SCompute::Fold: {
        std::uint64_t h = s.a;
        for (std::uint32_t k = 0; k < s.operandsCount; ++k) h = combine(h, read(st, in[k]));
        return h;
      }
      case SCompute::LastRead: return s.operandsCount == 0 ? 0 : read(st, in[s.operandsCount - 1]);
      case SCompute::Slot: return st.slots[s.from];
      case SCompute::SlotCombine: return combine(st.slots[s.from], s.a);
      case SCompute::Read: return read(st, in[0]);
      case SCompute::ReadCombine: return combine(read(st, in[0]), s.a);
    }
    return 0;
  }

  void runStep(SState& st, const SStep& s) const {
    const std::uint64_t v = compute(st, s);
    switch (s.dest) {
      case SDest::Root:
        st.digest[s.index] = v;
        st.lastPath[s.index] = kNoPath;
        break;
      case SDest::Slot: st.slots[s.index] = v; break;
      case SDest::Write: write(st, operands[s.index], v); break;
    }
  }
};

namespace {

class StorageCompiler {
 public:
  StorageCompiler(const Analysis& analysis, const ExecOptions& options)
      : analysis_(analysis), program_(*analysis.program), options_(options), valueModel_(options.valueSemantics) {}

  std::shared_ptr<const StorageProgram> compile() {
    const Graph& g = program_.graph;
    out_ = std::make_shared<StorageProgram>();
    out_->paths.push_back({});
    out_->steps.reserve(2 * g.nodes.size());
    out_->operands.reserve(2 * g.nodes.size());
    out_->nodeStepEnd.resize(g.nodes.size());
    std::size_t placeholders = 0;
    for (const Node& n : g.nodes) placeholders += n.isPlaceholder();
    out_->placeholders.reserve(placeholders);
    values_.resize(g.nodes.size());
    declared_.resize(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      current_ = i;
      const Node& n = g.nodes[i];
      switch (n.op) {
        case NodeOp::Placeholder:
          values_[i] = freshRoot(computed(SCompute::Input, hashText(n.name),
                                          static_cast<std::uint32_t>(out_->placeholders.size())));
          out_->placeholders.emplace_back(n.name, values_[i].root);
          declared_[i] = values_[i];
          break;
        case NodeOp::GetAttr:
          values_[i] = freshRoot(computed(SCompute::Constant, hashText("get_attr:" + n.target)));
          break;
        case NodeOp::CallFunction:
        case NodeOp::CallModule: values_[i] = compileCall(n); break;
        case NodeOp::Output: break;
      }
      out_->nodeStepEnd[i] = static_cast<std::uint32_t>(out_->steps.size());
    }
    compileEnd();  // what it emits belongs to the last node, as the steps it follows
    if (!out_->nodeStepEnd.empty()) out_->nodeStepEnd.back() = static_cast<std::uint32_t>(out_->steps.size());
    out_->nodeValues = std::move(values_);
    out_->roots = roots_;
    out_->slots = slots_;
    return out_;
  }

 private:
  const Analysis& analysis_;
  const Program& program_;
  const ExecOptions& options_;
  bool valueModel_;
  std::shared_ptr<StorageProgram> out_;
  std::vector<SValue> values_;
  std::vector<SValue> declared_;  // the placeholders as declared (F may rebind values_)
  std::map<Path, std::uint32_t> pathIndex_;
  std::uint32_t roots_ = 0, slots_ = 0;
  std::size_t current_ = 0;
  // One call's inputs (the tensors it reads), bound arguments and results: kept across the
  // calls of a compile, so that each call does not allocate its own.
  std::vector<SValue> inputs_, args_, results_;

  void emit(const SStep& step) { out_->steps.push_back(step); }

  std::uint32_t internPath(const Path& p) {
    if (p.empty()) return 0;
    auto [it, inserted] = pathIndex_.emplace(p, static_cast<std::uint32_t>(out_->paths.size()));
    if (inserted) out_->paths.push_back(p);
    return it->second;
  }

  // A step's computation (its destination is set where it is emitted).
  static SStep computed(SCompute compute, std::uint64_t a = 0, std::uint32_t from = 0) {
    SStep s;
    s.compute = compute;
    s.a = a;
    s.from = from;
    return s;
  }
  // One that reads `operands` (appended to the program's operand list).
  SStep reading(SCompute compute, std::span<const SValue> operands, std::uint64_t a = 0) {
    SStep s = computed(compute, a);
    s.operandsAt = static_cast<std::uint32_t>(out_->operands.size());
    s.operandsCount = static_cast<std::uint32_t>(operands.size());
    out_->operands.insert(out_->operands.end(), operands.begin(), operands.end());
    return s;
  }
  SStep reading(SCompute compute, const SValue& operand, std::uint64_t a = 0) {
    return reading(compute, std::span<const SValue>(&operand, 1), a);
  }

  // A fresh root whose digest `s` computes at run time.
  SValue freshRoot(SStep s) {
    SValue v;
    v.kind = SValue::Kind::View;
    v.root = roots_++;
    s.dest = SDest::Root;
    s.index = v.root;
    emit(s);
    return v;
  }

  SValue freshSlot(SStep s) {
    SValue v;
    v.kind = SValue::Kind::Slot;
    v.slot = slots_++;
    s.dest = SDest::Slot;
    s.index = v.slot;
    emit(s);
    return v;
  }

  // Writes what `s` computes through `target` (StorageProgram::write).
  void emitWrite(const SValue& target, SStep s) {
    s.dest = SDest::Write;
    s.index = static_cast<std::uint32_t>(out_->operands.size());
    out_->operands.push_back(target);
    emit(s);
  }

  SValue viewOf(const SValue& base, std::uint64_t step) {
    if (base.kind != SValue::Kind::View) return base;
    SValue v = base;
    Path p = out_->paths[base.path];
    p.push_back(step);
    v.path = internPath(p);
    return v;
  }

  SValue resolve(const Arg& a) {
    SValue v;
    switch (a.kind) {
      case Arg::Kind::Ref: return values_.at(a.node);
      case Arg::Kind::List:
      case Arg::Kind::Tuple:
        v.kind = SValue::Kind::List;
        for (const Arg& item : a.items) v.items.push_back(resolve(item));
        return v;
      case Arg::Kind::None: v.constant = 0; return v;
      case Arg::Kind::Bool:
      case Arg::Kind::Int: v.constant = combine(1, static_cast<std::uint64_t>(a.kind == Arg::Kind::Bool ? a.boolean : a.integer)); return v;
      case Arg::Kind::Float: v.constant = combine(2, scalarElement(a.real)); return v;
      case Arg::Kind::String:
      case Arg::Kind::Token: v.constant = combine(3, hashText(a.text)); return v;
    }
    return v;
  }

  // Every tensor (view) inside a value, flattened.
  static void views(const SValue& v, std::vector<SValue>& out) {
    if (v.kind == SValue::Kind::View || v.kind == SValue::Kind::Slot) out.push_back(v);
    else if (v.kind == SValue::Kind::List)
      for (const SValue& item : v.items) views(item, out);
  }

  // The constant part of a value (literals, list structure), for hashing.
  static std::uint64_t constantPart(const SValue& v) {
    switch (v.kind) {
      case SValue::Kind::Constant: return v.constant;
      case SValue::Kind::List: {
        std::uint64_t h = 0x4c495354 + v.items.size();
        for (const SValue& item : v.items) h = combine(h, constantPart(item));
        return h;
      }
      default: return 7;
    }
  }

  // H(seed, reads of `inputs`), at run time.
  SStep hashOfReads(std::uint64_t seed, std::span<const SValue> inputs) { return reading(SCompute::Fold, inputs, seed); }

  // A schema-less target in a behaviour draw other than 0 (oracle.h: HavocBehaviour): reads
  // every input, then writes H(reads, 2000 + k) into tensor argument k (through its view, or
  // its whole storage) where the draw says so; the result is a fresh root holding the hash of
  // the reads, or tensor argument k itself (getitems of it are views of it).
  SValue compileHavoc(const HavocBehaviour& behaviour, std::uint64_t seed, const std::vector<SValue>& inputs) {
    std::vector<SValue> tensors;
    for (const SValue& in : inputs)
      if (in.kind == SValue::Kind::View) tensors.push_back(in);
    const std::uint32_t valueSlot = slots_++;
    SStep value = hashOfReads(seed, inputs);
    value.dest = SDest::Slot;
    value.index = valueSlot;
    emit(value);
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      if (!behaviour.writes(k, tensors.size())) continue;
      SValue target = tensors[k];
      if (behaviour.writesWholeStorage(k)) target.path = 0;
      emitWrite(target, computed(SCompute::SlotCombine, 2000 + k, valueSlot));
    }
    if (std::optional<std::size_t> k = behaviour.resultViewOf(0, tensors.size())) return tensors[*k];
    return freshRoot(computed(SCompute::Slot, 0, valueSlot));
  }

  SValue compileCall(const Node& n) {
    const NodeFacts& facts = analysis_.nodes[current_];
    const OpInfo& info = facts.info;
    if (info.getitem) {
      if (n.args.size() < 2) return {};
      SValue container = resolve(n.args[0]);
      std::int64_t i = n.args[1].kind == Arg::Kind::Int ? n.args[1].integer : 0;
      if (container.kind == SValue::Kind::List) {
        std::int64_t size = static_cast<std::int64_t>(container.items.size());
        if (i < 0) i += size;
        if (i >= 0 && i < size) return container.items[static_cast<std::size_t>(i)];
        return {};
      }
      std::uint64_t step = combine(hashText("getitem"), static_cast<std::uint64_t>(i));
      if (container.kind == SValue::Kind::Slot) {
        std::uint32_t from = container.slot;
        return freshSlot(computed(SCompute::SlotCombine, step, from));
      }
      if (!valueModel_) return viewOf(container, step);
      return freshRoot(reading(SCompute::ReadCombine, container, step));
    }
    std::vector<SValue>& inputs = inputs_;
    inputs.clear();
    std::uint64_t seed = info.opId;
    if (!info.schema) {
      for (const Arg& a : n.args) {
        SValue v = resolve(a);
        views(v, inputs);
        seed = combine(seed, constantPart(v));
      }
      for (const auto& [name, a] : n.kwargs) {
        SValue v = resolve(a);
        views(v, inputs);
        seed = combine(combine(seed, hashText(name)), constantPart(v));
      }
      const HavocBehaviour behaviour(valueModel_ ? 0 : options_.behaviour, n.name);
      if (behaviour.readsOnly()) return freshRoot(hashOfReads(seed, inputs));
      return compileHavoc(behaviour, seed, inputs);
    }
    const Schema& s = *info.schema;
    if (!facts.bound) {  // arguments that do not fit: treat as schema-less (reads all, fresh result)
      for (const Arg& a : n.args) views(resolve(a), inputs);
      for (const auto& [name, a] : n.kwargs) views(resolve(a), inputs);
      return freshRoot(hashOfReads(seed, inputs));
    }
    std::vector<SValue>& args = args_;
    args.clear();
    for (const ArgRef& a : analysis_.args(facts)) args.push_back(resolve(*a.arg));
    std::uint64_t literals = info.opId;
    for (std::size_t k = 0; k < args.size(); ++k)
      if (!s.arguments[k].type.isTensor()) literals = combine(literals, constantPart(args[k]));

    // Views.
    if (isViewKind(info.kind) && !info.outVariant && !args.empty()) {
      const bool identity = info.kind == OpKind::Alias || info.kind == OpKind::Contiguous;
      if (info.copyVariant) out_->dependsOnViewMode = true;
      const bool copy = valueModel_ || (info.copyVariant && (options_.viewMode == ViewMode::CopyViews ||
                                                             (s.name == "view_copy" && facts.keptViewCopy)));
      std::size_t selfAt = s.argumentIndex("self").value_or(0);
      const SValue self = args[selfAt];
      // The view step does not depend on the variant (view vs view_copy), only on its meaning.
      std::uint64_t step = combine(static_cast<std::uint64_t>(info.kind), literals ^ info.opId);
      auto makeView = [&](std::uint64_t st) -> SValue {
        if (!copy) return identity ? self : viewOf(self, st);
        if (identity) return freshRoot(reading(SCompute::Read, self));
        return freshRoot(reading(SCompute::ReadCombine, self, st));
      };
      if (!isListViewKind(info.kind)) return makeView(step);
      SValue list;
      list.kind = SValue::Kind::List;
      std::size_t count = listLength(n);
      for (std::size_t i = 0; i < count; ++i) list.items.push_back(makeView(combine(step, i)));
      return list;
    }
    // Shape queries do not read contents.
    if (info.kind == OpKind::SymSize) {
      std::uint64_t h = literals;
      for (const SValue& a : args) h = combine(h, a.kind == SValue::Kind::View ? a.path : 0);
      return freshSlot(computed(SCompute::Constant, h));
    }

    // The value computed by the op.
    const bool copyLike = info.kind == OpKind::Copy || info.kind == OpKind::Clone;
    if (copyLike) {
      // Exactly the value read, whatever its kind: a copy of a value that is no storage (a
      // constant, say the result of an in-place op on a literal) is that constant, as the end
      // writes of S_par read it (they go through read() too).
      std::size_t from = s.argumentIndex(info.kind == OpKind::Copy ? "src" : "self").value_or(0);
      if (from < args.size()) inputs.push_back(args[from]);
    } else {
      for (std::size_t k = 0; k < args.size(); ++k)
        if (s.arguments[k].type.isTensor()) views(args[k], inputs);
    }
    const std::uint32_t valueSlot = slots_++;
    {
      SStep value = reading(copyLike ? SCompute::LastRead : SCompute::Fold, inputs, literals);
      value.dest = SDest::Slot;
      value.index = valueSlot;
      emit(value);
    }
    // What is written into argument k (or a result) on channel `channel`.
    auto writtenValue = [copyLike, valueSlot](std::uint64_t channel) {
      return copyLike ? computed(SCompute::Slot, 0, valueSlot) : computed(SCompute::SlotCombine, channel, valueSlot);
    };

    // Writes. Storage model: into the argument. Value model (F): a fresh root, the new
    // version, replaces the argument node for later references, except for an in-place-kind
    // op's returned self (see rebindsWrittenArgument), whose new version is its result.
    std::vector<std::optional<SValue>> versions(valueModel_ ? args.size() : 0);  // F: new version of argument k
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (!s.arguments[k].type.isWrite()) continue;
      if (valueModel_) {
        if (!rebindsWrittenArgument(s, k)) continue;
        const Arg& written = *analysis_.args(facts)[k].arg;
        if (args[k].kind == SValue::Kind::View) {
          versions[k] = freshRoot(writtenValue(k));
          if (written.isRef()) values_.at(written.node) = *versions[k];
        } else if (args[k].kind == SValue::Kind::List) {
          for (std::size_t j = 0; j < args[k].items.size(); ++j) {
            if (args[k].items[j].kind != SValue::Kind::View) continue;
            SValue next = freshRoot(writtenValue(combine(k, j)));
            if (written.isSequence() && j < written.items.size() && written.items[j].isRef())
              values_.at(written.items[j].node) = next;
          }
        }
        continue;
      }
      if (args[k].kind == SValue::Kind::View) {
        emitWrite(args[k], writtenValue(k));
      } else if (args[k].kind == SValue::Kind::List) {
        for (std::size_t j = 0; j < args[k].items.size(); ++j) emitWrite(args[k].items[j], writtenValue(combine(k, j)));
      }
    }

    // Results.
    std::vector<SValue>& results = results_;
    results.clear();
    for (std::size_t r = 0; r < s.returns.size(); ++r) {
      const SchemaType& type = s.returns[r].type;
      std::optional<std::size_t> aliased;
      for (std::size_t k = 0; k < s.arguments.size(); ++k)
        if (type.alias && s.arguments[k].type.alias && !type.alias->beforeSets.empty() &&
            type.alias->beforeSets == s.arguments[k].type.alias->beforeSets)
          aliased = k;
      if (!type.isTensor()) {
        results.push_back(freshSlot(writtenValue(5000 + r)));
      } else if (type.isList && !aliased) {
        SValue list;
        list.kind = SValue::Kind::List;
        std::size_t count = listLength(n);
        for (std::size_t i = 0; i < count; ++i) list.items.push_back(freshRoot(writtenValue(combine(1000 + r, i))));
        results.push_back(list);
      } else if (aliased && s.arguments[*aliased].type.isWrite()) {
        if (!valueModel_) results.push_back(args[*aliased]);
        else if (versions[*aliased]) results.push_back(*versions[*aliased]);  // out=: the rebound version
        else results.push_back(freshRoot(writtenValue(*aliased)));
      } else if (aliased) {  // an unknown view of argument k
        std::uint64_t step = combine(literals, 9000 + r);
        if (!valueModel_) results.push_back(viewOf(args[*aliased], step));
        else {
          results.push_back(freshRoot(reading(SCompute::ReadCombine, args[*aliased], step)));
        }
      } else {
        results.push_back(freshRoot(writtenValue(1000 + r)));
      }
    }
    SValue result;
    if (results.size() == 1) result = results[0];
    else if (results.size() > 1) {
      result.kind = SValue::Kind::List;
      result.items = std::move(results);
    }
    // _share_alloc_with_arg_idx = k: the result lives in argument k's storage.
    const std::optional<int>& share = facts.shareAllocArgIndex;
    if (share && !valueModel_ && result.kind == SValue::Kind::View && *share >= 0 &&
        static_cast<std::size_t>(*share) < n.args.size()) {
      SValue base = resolve(n.args[static_cast<std::size_t>(*share)]);
      if (base.kind == SValue::Kind::View) {
        emitWrite(base, reading(SCompute::Read, result));
        result = base;
      }
    }
    return result;
  }

  // Number of elements of a list result: the highest getitem index used, plus one.
  std::size_t listLength(const Node&) const {
    std::size_t count = 0;
    for (std::size_t user : analysis_.nodes[current_].getitemUsers) {
      const Node& u = program_.graph.nodes[user];
      if (u.args.size() >= 2 && u.args[1].kind == Arg::Kind::Int && u.args[1].integer >= 0)
        count = std::max(count, static_cast<std::size_t>(u.args[1].integer) + 1);
    }
    return count;
  }

  void compileEnd() {
    const Signature& sig = program_.signature;
    std::span<const ArgRef> returned = analysis_.returned();
    auto targetOf = [&](std::size_t pos) -> std::optional<SValue> {
      if (std::optional<std::size_t> node = analysis_.mutatedPlaceholder[pos]) return declared_[*node];
      return std::nullopt;
    };
    out_->placedOutputs.reserve(analysis_.visibleOutputs.size());
    out_->referenceOutputs.reserve(analysis_.visibleOutputs.size());
    for (std::size_t pos : analysis_.visibleOutputs) {
      SValue v = resolve(*returned[pos].arg);
      std::string label = "output " + std::to_string(out_->placedOutputs.size());
      if (returned[pos].arg->isRef()) label += " (%" + analysis_.program->graph.nodes[returned[pos].arg->node].name + ")";
      SValue reference = v;
      if (pos < sig.outputs.size() && sig.outputs[pos].kind == OutputKind::UserInputMutation)
        if (std::optional<SValue> t = targetOf(pos)) reference = *t;
      out_->placedOutputs.emplace_back(label, v);
      out_->referenceOutputs.emplace_back(label, reference);
    }
    for (std::size_t pos = 0; pos < sig.outputs.size() && pos < returned.size(); ++pos) {
      if (!isMutation(sig.outputs[pos].kind) || options_.placedProgram) continue;
      std::optional<SValue> target = targetOf(pos);
      if (!target) continue;  // validate() rules this out
      out_->endWrites.push_back({*target, resolve(*returned[pos].arg)});
    }
  }
};

}  // namespace

bool dependsOnViewMode(const StorageProgram& exe) { return exe.dependsOnViewMode; }

Result<std::shared_ptr<const StorageProgram>> compileStorage(const Analysis& analysis, const ExecOptions& options) {
  return Result<std::shared_ptr<const StorageProgram>>::success(StorageCompiler(analysis, options).compile());
}

namespace {

// The state of a run of `exe` with `inputs`, laid over `buffer` (resized): every digest, value
// and slot 0, no view written.
SState stateOver(const StorageProgram& exe, InputSet inputs, std::vector<std::uint64_t>& buffer) {
  const std::size_t roots = exe.roots;
  buffer.assign(3 * roots + exe.slots, 0);
  std::fill(buffer.begin() + static_cast<std::ptrdiff_t>(roots), buffer.begin() + static_cast<std::ptrdiff_t>(2 * roots),
            kNoPath);
  SState st;
  st.digest = buffer.data();
  st.lastPath = st.digest + roots;
  st.lastValue = st.lastPath + roots;
  st.slots = st.lastValue + roots;
  st.seed = inputs.seed;
  st.inputSet = inputs.index;
  st.values = inputs.values;
  return st;
}

// Runs every step; with `nodeHashes`, records each node's value after its steps.
void runSteps(const StorageProgram& exe, SState& st, std::uint64_t* nodeHashes) {
  std::size_t s = 0;
  for (std::size_t n = 0; n < exe.nodeStepEnd.size(); ++n) {
    for (; s < exe.nodeStepEnd[n]; ++s) exe.runStep(st, exe.steps[s]);
    if (nodeHashes) nodeHashes[n] = exe.read(st, exe.nodeValues[n]);
  }
}

// Applies ending `sem`'s end writes (`values`: scratch).
void applyEnding(const StorageProgram& exe, SState& st, Semantics sem, std::vector<std::uint64_t>& values) {
  if (sem == Semantics::Par || sem == Semantics::Value) {
    values.clear();
    for (const SEndWrite& w : exe.endWrites) values.push_back(exe.read(st, w.value));
    for (std::size_t i = 0; i < values.size(); ++i) exe.write(st, exe.endWrites[i].target, values[i]);
  } else if (sem == Semantics::Seq) {
    for (const SEndWrite& w : exe.endWrites) exe.write(st, w.target, exe.read(st, w.value));
  }
}

const std::vector<std::pair<std::string, SValue>>& outputsOf(const StorageProgram& exe, Semantics sem) {
  return sem == Semantics::Placed ? exe.placedOutputs : exe.referenceOutputs;
}

}  // namespace

std::vector<RunResult> runStorage(const StorageProgram& exe, std::span<const Semantics> endings, InputSet inputs,
                                  bool recordNodeHashes) {
  std::vector<std::uint64_t> buffer, snapshot, values;
  SState st = stateOver(exe, inputs, buffer);
  std::vector<std::uint64_t> nodeHashes;
  if (recordNodeHashes) nodeHashes.assign(exe.nodeStepEnd.size(), 0);
  runSteps(exe, st, recordNodeHashes ? nodeHashes.data() : nullptr);
  std::vector<RunResult> results;
  results.reserve(endings.size());
  if (endings.size() > 1) snapshot = buffer;
  for (std::size_t k = 0; k < endings.size(); ++k) {
    if (k > 0) std::copy(snapshot.begin(), snapshot.end(), buffer.begin());
    const Semantics sem = endings[k];
    applyEnding(exe, st, sem, values);
    RunResult r;
    r.tier = Tier::Storage;
    const auto& outs = outputsOf(exe, sem);
    r.placeholders.reserve(exe.placeholders.size());
    r.outputs.reserve(outs.size());
    for (const auto& [label, root] : exe.placeholders) r.placeholders.push_back({label, {st.digest[root]}});
    for (const auto& [label, value] : outs) r.outputs.push_back({label, {exe.read(st, value)}});
    r.nodeHashes = nodeHashes;
    results.push_back(std::move(r));
  }
  return results;
}

void observeStorage(const StorageProgram& exe, std::span<const Semantics> endings, InputSet inputs,
                    RunScratch& scratch, std::span<Observations> out) {
  SState st = stateOver(exe, inputs, scratch.arena);
  runSteps(exe, st, nullptr);
  if (endings.size() > 1) scratch.snapshot.assign(scratch.arena.begin(), scratch.arena.end());
  for (std::size_t k = 0; k < endings.size(); ++k) {
    if (k > 0) std::copy(scratch.snapshot.begin(), scratch.snapshot.end(), scratch.arena.begin());
    applyEnding(exe, st, endings[k], scratch.out);
    Observations& o = out[k];
    o.clear();
    const std::size_t count = exe.placeholders.size() + outputsOf(exe, endings[k]).size();
    o.values.reserve(count);
    o.ends.reserve(count);
    for (const auto& entry : exe.placeholders) {
      o.values.push_back(st.digest[entry.second]);
      o.endObservation();
    }
    o.placeholders = exe.placeholders.size();
    for (const auto& entry : outputsOf(exe, endings[k])) {
      o.values.push_back(exe.read(st, entry.second));
      o.endObservation();
    }
  }
}

std::string storageObservationLabel(const StorageProgram& exe, bool isOutput, std::size_t i) {
  return isOutput ? exe.referenceOutputs[i].first : exe.placeholders[i].first;  // placed outputs: the same labels
}

}  // namespace wb::oracle::detail
