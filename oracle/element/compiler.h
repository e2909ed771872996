// oracle/element/compiler.h: the element tier (DESIGN §7): real strided tensors of 64-bit
// integers; its compiler (internal to oracle/).
//
// Compilation does everything that does not depend on data: since shapes are static and
// aliasing in a graph is static (which storage a value lives in, at which offset, with which
// strides), every node's layout is fixed at compile time, every storage gets a fixed range of
// one arena, and every read or write becomes a precomputed run of arena offsets (a range when
// contiguous, else a list in the program's offset pool). A run is then a sequence of steps,
// plain records in one vector: read operands (contiguous ones in place, others gathered into
// scratch), compute, scatter the results. Views cost nothing at run time in the storage model;
// they are layouts.
//
// The reference semantics of a compile is the plain compile: compile() of one program in one
// view mode and one model, node after node from the first (compileElement). check() needs five
// compiles that agree up to some node (the view modes, F, a program and its placed version),
// and compileShared makes them sharing the work up to it: forks, and replays of a parent's
// nodes (sharing.cpp). That is an optimisation only: each of its programs compiles, or fails
// with the same message, and runs exactly as its plain compile does. The differential test
// that holds it to that is OracleElement.ForkedCompilesMatchPlainCompiles
// (tests/oracle_element_test.cpp), over every way a program is shared.
//
// Element semantics:
// - Every element is a 64-bit integer, whatever the dtype; arithmetic (add, sub, rsub, mul,
//   neg, sum, mean) is exact with wrap-around (unsigned arithmetic). mean = sum / count, the
//   sum read as a signed 64-bit integer and divided with truncation toward zero (count > 0).
//   A float scalar argument is its integer value when integral, else a hash of its bits.
// - A boolean (condition, mask) is the lowest bit of an element.
// - Index values are taken modulo the dimension (read as signed, result non-negative).
// - Every other op with a schema: each output element = H(op, inputs, channel, position),
//   with shapes from the node's annotation. An in-place or mutating uninterpreted op writes
//   H(op, inputs, k, position) into each written argument k; its result, if it aliases
//   argument k, is that argument (storage model) or a fresh tensor with the same contents
//   (value model), so S_par and F agree on well-formed programs. Under F a written argument
//   that is not an in-place-kind op's returned self is rebound to a fresh tensor with those
//   contents (oracle.h: mutable custom ops, out=, Tensor(a!)[] lists).
// - Results of a tuple-returning node (printed without an annotation) take their shapes from
//   the annotations of the getitems that take them; an element no getitem takes needs none.
// - Schema-less targets (custom ops without a schema, delegates, higher-order ops,
//   call_module): every tensor argument is read, then the node does what the run's behaviour
//   draw says (oracle.h: HavocBehaviour): draw 0 writes nothing and makes fresh results
//   (hashed, shaped by the annotation, or an opaque digest when there is none); another draw
//   may write H(op, inputs, 2000 + k, position) into tensor argument k (its view or its whole
//   storage) and make a result, or an element of a tuple result, a view of an argument. F
//   always runs draw 0 (it cannot model writes of ops it knows nothing about), so that
//   S_par == F for delegate graphs holds where the program is fine; the placement is compared
//   with S_par in every draw.
//
// The tier's parts, one concept a file:
//   layout.h         shapes and strided layouts, and the algebra over them
//   program.h        the compiled program: steps and the pools they point into
//   machine.cpp      the run-time machine: runs a program's steps, its endings, observations
//   compiler.h       the compiler (this class); compiler.cpp: the walk over the nodes, storages,
//                    values, calls and the end (observations and end writes)
//   views.cpp        the compilation of views (layouts, or copies where a view is a copy)
//   kernels.cpp      the compilation of the interpreted ops (kernels)
//   uninterpreted.cpp  ops with a schema but no interpretation, and schema-less targets: hashes
//   sharing.cpp      the sharing of compiles: forks, and the replay of a parent's nodes
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oracle/element/layout.h"
#include "oracle/element/program.h"
#include "oracle/ops.h"

namespace wb::oracle::detail {

// A compile-time value: what a node or an argument denotes.
struct CValue {
  // The small fields first, packed (no padding between them): a value is copied whole.
  enum class Kind : std::uint8_t { None, Int, Float, Bool, Text, Tensor, List, Opaque };
  Kind kind = Kind::None;
  bool b = false;
  std::uint32_t slot = 0;  // Opaque: index of its runtime digest
  // List: its items, at ElementCompiler::lists_[itemsAt, itemsAt + itemsCount). Held there
  // rather than in a vector of its own, so that a CValue is a plain record: a fork copies
  // every node's value in one block, and destroys none.
  std::uint32_t itemsAt = 0, itemsCount = 0;
  std::int64_t i = 0;  // Int, Bool; Text: the hash of the text
  double f = 0;
  Layout t;

  // User-provided, so that a value-initialised CValue (resize(), newList(), CValue{}) gets the
  // initialisers above without the whole record zeroed first (a Shape's tail past its size is
  // never read; see Shape): values are made by the hundred per compile and fork.
  CValue() {}

  bool isTensor() const { return kind == Kind::Tensor; }
  bool isNone() const { return kind == Kind::None; }
};
// Every field is plain data: a value is copied as its bytes (forkAt copies a block of them).
static_assert(std::is_trivially_copyable_v<CValue>);

// ---------------------------------------------------------------------------------------------
// The compiler.

class ElementCompiler {
 public:
  ElementCompiler(const Analysis& analysis, const ExecOptions& options)
      : analysis_(&analysis), program_(analysis.program), options_(options), valueModel_(options.valueSemantics) {}

  using Compiled = Result<std::shared_ptr<const ElementProgram>>;

  Compiled compile() {
    return finish([&] {
      begin();
      walk(0);
      compileEnd();
    });
  }

  // What check() compiles, sharing work: storage semantics in both view modes, the value model
  // (F), and the placed program in both view modes, each what its plain compile() would give
  // (see the top of this file). Compiles that agree up to some node share the work up to it:
  // this compiler is copied just before that node (a fork) and the copy continues differently.
  // - The alias-views compile forks before the first `*_copy` view (the view mode is read
  //   nowhere else).
  // - F forks before the first node whose compile depends on the model (see dependsOnModel).
  // - The placed program forks before node `placedFrom`, when the reference program and the
  //   placed one compile alike up to there (see sharedPrefix in ops.h): its alias-views compile
  //   then forks from this compiler's alias-views fork if that one started earlier.
  // aliasViews: nullopt when the copy-views executable does not depend on the view mode (or
  // the copy-views compile failed). value, placed: nullopt when not made here.
  struct Programs {
    Compiled copyViews;
    std::optional<Compiled> aliasViews, value, placed, placedAlias;
  };
  Programs compileShared(bool value, const Analysis* placed, std::size_t placedFrom);

 private:
  template <typename F>
  Compiled finish(F&& body) {
    try {
      body();
    } catch (const Unsupported& u) {
      // A compile that fails part way through a call leaves that call's pending rebinds (F) in
      // the scratch it shares with its forks: dropped, or the next compile would apply them.
      scratch_->rebinds.clear();
      Diagnostic d;
      d.file = "<element tier>";
      d.message = u.why;
      return Result<std::shared_ptr<const ElementProgram>>::failure(d);
    }
    out_.arenaSize = arenaEnd();
    out_.opaqueSlots = opaqueSlots_;
    out_.dependsOnViewMode = viewModeSeen_;
    // The compile this one was forked from has finished first (see compileShared), if it
    // succeeded.
    out_.forked = parent_ != nullptr;
    if (parent_) out_.forkedFrom = parent_->finished_;
    if (!out_.forkedFrom) out_.forkedAt = {};
    finished_ = std::make_shared<const ElementProgram>(std::move(out_));
    return Result<std::shared_ptr<const ElementProgram>>::success(finished_);
  }

  // The end of the arena used so far: of the main storages and of the side ones (see fresh()).
  std::size_t arenaEnd() const {
    const std::int64_t main = storages_.empty() ? 0 : storages_.back().base + storages_.back().size;
    return static_cast<std::size_t>(std::max(main, sideEnd_));
  }

  // --- forks (sharing.cpp) ---

  // A fork (see compileShared) continues from the node it was taken before.
  Compiled resume();

  // Copies this compiler, as it stands before node i, for another view mode or model; the
  // fork's program has `nodes` nodes (its per-node tables' size).
  std::shared_ptr<ElementCompiler> forkAt(std::size_t i, std::size_t nodes);

  // Before node placedFrom_ (placed_ set): this compile, continued with the placed program.
  // Nodes [0, placedFrom_) compile alike in both (sharedPrefix), so only the per-node tables
  // change size. The placed program's alias-views compile forks from it, unless this compile
  // has already forked its own (then that fork makes the placed program's; see walk).
  void takePlacedFork();

  // Whether compiling node i reads valueModel_: views (every view is a copy under F), ops
  // with alias annotations (writes, returns that alias an argument), _share_alloc_with_arg_idx
  // and, in a behaviour draw other than 0, schema-less targets (F runs draw 0). Nothing else
  // differs between the models. A `*_copy` view variant (not an `out=` one, no annotation) is
  // a copy under F and in the copy-views mode alike, so this compile (the copy-views one; F
  // forks from it) and F's agree on it.
  bool dependsOnModel(std::size_t i) const;

  void takeValueFork(std::size_t i);

  // What one call's compile uses and leaves behind (never read by the next call). One for a
  // compile and all its forks: they run one after another, and a fork is taken between two
  // nodes, so no call's compile is split by one; the forks then reuse the buffers' capacity
  // rather than growing their own.
  struct Scratch {
    std::vector<CValue> literals;                         // a call's non-reference arguments
    std::vector<const CValue*> argPointers;
    std::vector<std::pair<std::size_t, CValue>> rebinds;  // F: pending rebinds of one call
    std::vector<Span> hashSpans;                          // the inputs of one digest
    std::vector<std::uint32_t> hashSlots;
    // The operands of the kernel being compiled (copied into the program's operand pool by
    // emitKernel).
    std::vector<Operand> ins;
  };
  std::shared_ptr<Scratch> scratch_ = std::make_shared<Scratch>();  // shared with the forks

  const Analysis* analysis_;  // pointers: a fork may continue with another program (see forkTo)
  const Program* program_;
  ExecOptions options_;  // a copy: the alias-views fork changes its view mode
  bool forkWanted_ = false, valueForkWanted_ = false;
  std::shared_ptr<ElementCompiler> fork_, valueFork_, placedFork_;  // see compileShared()
  // The compile this one was forked from (it outlives this one: it holds it, directly or
  // through its forks), and this one's program once finished (for its forks' forkedFrom).
  ElementCompiler* parent_ = nullptr;
  std::shared_ptr<const ElementProgram> finished_;
  const Analysis* placed_ = nullptr;  // the placed program, to fork to before placedFrom_
  std::size_t placedFrom_ = 0;
  std::size_t forkedAt_ = 0;
  bool valueModel_;
  ElementProgram out_;
  Pool<CValue> values_;  // Pools: a fork copies them and continues
  // The placeholders as declared (values_ may rebind one under F; the observations and end
  // writes are of the declared storage).
  Pool<std::uint32_t> declaredAt_;  // per node: 1 + its index in declaredValues_, or 0
  std::vector<CValue> declaredValues_;
  const CValue noValue_;
  const CValue& declared(std::size_t node) const {
    return declaredAt_[node] ? declaredValues_[declaredAt_[node] - 1] : noValue_;
  }
  // Storages: where each starts in the arena and its size. A fork mirrors its parent's
  // (mirrors_): its main table is always a prefix of the parent's final one, so a node after
  // the fork that allocates what the parent's allocated there gets the same storages, and the
  // nodes after it read the same places whatever came before (replay() depends on it). The
  // storages a node makes that its parent's did not are side storages (ids with
  // kSideStorage), placed above the parent's arena; a node that made fewer leaves the rest of
  // the parent's as unused holes in the main table.
  static constexpr std::uint32_t kSideStorage = 0x80000000u;
  // A storage's place in the arena: a plain record, so that a fork copies the table in one
  // block (and one table, not one for the bases and one for the sizes).
  struct Storage {
    std::int64_t base, size;
  };
  Pool<Storage> storages_;
  std::vector<Storage> sides_;  // a vector: most forks make none
  std::int64_t sideEnd_ = 0;
  bool mirrors_ = false;
  std::size_t mirrorNext_ = 0, mirrorEnd_ = 0;  // the parent's storages of the node being compiled
  std::int64_t baseOf(std::uint32_t storage) const {
    return storage & kSideStorage ? sides_[storage & ~kSideStorage].base : storages_[storage].base;
  }
  std::int64_t sizeOf(std::uint32_t storage) const {
    return storage & kSideStorage ? sides_[storage & ~kSideStorage].size : storages_[storage].size;
  }
  std::uint32_t opaqueSlots_ = 0;
  std::size_t budget_ = 0;

  // Inlined where it is called (every span and fresh tensor): the failure, which builds a
  // message, is a call of its own.
  void charge(std::size_t elements) {
    budget_ += elements;
    if (budget_ > options_.maxElements) overBudget();
  }
  [[noreturn, gnu::noinline]] void overBudget() const {
    fail("memory cap: the element tier needs more than " + std::to_string(options_.maxElements) +
         " elements for this program (ExecOptions::maxElements)");
  }

  // --- storages and layouts ---

  // A fresh contiguous tensor of shape `shape`, made in `l` (in place: a Layout is a large
  // record, and most are made straight into a value).
  void fresh(const Shape& shape, Layout& l) {
    for (std::int64_t s : shape)
      if (s < 0) fail("negative size in shape");
    std::int64_t n = numelOf(shape);
    charge(static_cast<std::size_t>(n));
    l.offset = 0;
    if (mirrorNext_ < mirrorEnd_ && parent_->storages_[mirrorNext_].size == n) {
      // The parent's next storage of this node: the same id and place (see mirrors_).
      l.storage = static_cast<std::uint32_t>(mirrorNext_);
      storages_.push_back(parent_->storages_[mirrorNext_++]);
    } else if (mirrors_) {  // one the parent did not make here: above its arena
      if (sideEnd_ + n > std::int64_t{1} << 31) fail("memory cap: arena too large");
      l.storage = kSideStorage | static_cast<std::uint32_t>(sides_.size());
      if (sides_.empty()) sides_.reserve(8);  // a fork's first: room for a few, not grown one by one
      sides_.push_back(Storage{sideEnd_, n});
      sideEnd_ += n;
    } else {
      const std::int64_t base = static_cast<std::int64_t>(arenaEnd());
      if (base + n > std::int64_t{1} << 31) fail("memory cap: arena too large");
      l.storage = static_cast<std::uint32_t>(storages_.size());
      storages_.push_back(Storage{base, n});
    }
    l.sizes = shape;  // may be l.sizes itself
    setContiguousStrides(l.sizes, l.strides);
  }

  // The arena elements of a layout, in row-major order. Charged as if every offset were
  // listed (the budget, and so which programs fall back to the storage tier, is unchanged).
  Span spanOf(const Layout& l) {
    // numelOf and isContiguous in one pass (isContiguous's running product is the product of
    // the sizes after dimension i).
    std::int64_t n = 1;
    bool contiguous = true;
    for (std::size_t i = l.sizes.size(); i-- > 0;) {
      if (l.sizes[i] != 1 && l.strides[i] != n) contiguous = false;
      n *= l.sizes[i];
    }
    charge(static_cast<std::size_t>(n));
    Span span{};
    if (n == 0) return span;
    if (!contiguous) return listedSpanOf(l, n);
    // Most layouts (every fresh tensor): one range, no index walk.
    const std::int64_t base = baseOf(l.storage), size = sizeOf(l.storage);
    span.count = static_cast<std::uint32_t>(n);
    if (l.offset < 0 || l.offset + n > size) outsideStorage();
    span.at = static_cast<std::uint32_t>(base + l.offset);
    return span;
  }

  [[noreturn, gnu::noinline]] static void outsideStorage() { fail("a view reaches outside its storage (as_strided?)"); }

  // spanOf() of a layout that is not contiguous, with n > 0 elements: its offsets listed. A
  // function of its own, so that the contiguous case (most calls) is a short one.
  [[gnu::noinline]] Span listedSpanOf(const Layout& l, std::int64_t n);

  // --- values ---

  // The value of the node a reference refers to.
  const CValue& valueOf(const ArgRef& r) const {
    if (r.node == ArgRef::kNoNode) throw std::out_of_range("a reference to no node");
    return values_[r.node];
  }

  CValue resolve(const ArgRef& r) {
    if (r.arg->isRef()) return valueOf(r);
    CValue v;
    if (r.arg->isSequence()) makeListOf(r, v);
    else setLiteral(*r.arg, v);
    return v;
  }

  // A literal argument that is no list (None, a number, a string or a token), written into
  // `v`, a CValue as made (fresh or reset()).
  static void setLiteral(const Arg& arg, CValue& v) {
    switch (arg.kind) {
      case Arg::Kind::Bool: v.kind = CValue::Kind::Bool; v.b = arg.boolean; v.i = arg.boolean; break;
      case Arg::Kind::Int: v.kind = CValue::Kind::Int; v.i = arg.integer; break;
      case Arg::Kind::Float: v.kind = CValue::Kind::Float; v.f = arg.real; break;
      case Arg::Kind::String:
      case Arg::Kind::Token: v.kind = CValue::Kind::Text; v.i = static_cast<std::int64_t>(hashText(arg.text)); break;
      default: break;  // None
    }
  }

  // List argument r: its items made in lists_, and the list written into `v` (no item of
  // lists_). Items are made in their place in the pool (a value is a large record, better
  // copied once), except nested lists: making one may move the pool.
  void makeListOf(const ArgRef& r, CValue& v) {
    const std::span<const ArgRef> items = analysis_->items(r);
    const std::uint32_t at = newList(items.size());  // fresh CValues
    for (std::size_t j = 0; j < items.size(); ++j) {
      const ArgRef& item = items[j];
      if (item.arg->isRef()) lists_[at + j] = valueOf(item);
      else if (!item.arg->isSequence()) setLiteral(*item.arg, lists_[at + j]);
      else {
        const CValue nested = resolve(item);  // makes lists after this one
        lists_[at + j] = nested;
      }
    }
    v.kind = CValue::Kind::List;
    v.itemsAt = at;
    v.itemsCount = static_cast<std::uint32_t>(items.size());
  }

  // The items of every list value (see CValue::itemsAt). A list is never changed once made,
  // and the pool only grows during a compile (a fork copies it with the values).
  Pool<CValue> lists_;

  // Room for a list of n items, made by the caller by index (an item's making may make lists
  // and move the pool): its start.
  std::uint32_t newList(std::size_t n) {
    const std::size_t at = lists_.size();
    lists_.resize(at + n);
    return static_cast<std::uint32_t>(at);
  }
  // A list of `items`, made.
  CValue makeList(const std::vector<CValue>& items) {
    CValue v;
    v.kind = CValue::Kind::List;
    v.itemsAt = static_cast<std::uint32_t>(lists_.size());
    v.itemsCount = static_cast<std::uint32_t>(items.size());
    lists_.insert(lists_.end(), items.begin(), items.end());
    return v;
  }
  // A list's items. Valid until the next list is made.
  std::span<const CValue> itemsOf(const CValue& v) const { return {lists_.data() + v.itemsAt, v.itemsCount}; }

  // Every field of `v` as a fresh CValue has it (kind None).
  static void reset(CValue& v) {
    v.kind = CValue::Kind::None;
    v.i = 0;
    v.f = 0;
    v.b = false;
    v.t.storage = 0;
    v.t.offset = 0;
    v.t.sizes.clear();
    v.t.strides.clear();
    v.itemsAt = v.itemsCount = 0;
    v.slot = 0;
  }

  // resolve() without copying a node's value: a reference yields the node's value itself,
  // anything else is built into `scratch`. Scalars (most literal arguments: defaults such as
  // alpha=1 or None) are written into it in place, field by field as a fresh CValue has them,
  // rather than built and moved in whole.
  const CValue& resolveRef(const ArgRef& a, CValue& scratch) {
    if (a.arg->isRef()) return valueOf(a);
    reset(scratch);
    if (a.arg->isSequence()) makeListOf(a, scratch);
    else setLiteral(*a.arg, scratch);
    return scratch;
  }

  static std::int64_t asInt(const CValue& v, const char* what) {
    switch (v.kind) {
      case CValue::Kind::Int:
      case CValue::Kind::Bool: return v.i;
      case CValue::Kind::Float:
        // A float that is an integer of int64's range (-2^63 <= f < 2^63) is that integer; the
        // cast of anything else (inf, nan, 1e300) is undefined, so it is tested first.
        if (std::isfinite(v.f) && v.f == std::trunc(v.f) && v.f >= -0x1p63 && v.f < 0x1p63)
          return static_cast<std::int64_t>(v.f);
        break;
      default: break;
    }
    fail(std::string("expected a static integer for ") + what);
  }

  static std::optional<std::int64_t> asOptInt(const CValue& v, const char* what) {
    if (v.isNone()) return std::nullopt;
    return asInt(v, what);
  }

  Shape asIntList(const CValue& v, const char* what) const {
    if (v.kind == CValue::Kind::List) {
      Shape out;
      for (const CValue& item : itemsOf(v)) out.push_back(asInt(item, what));
      return out;
    }
    return {asInt(v, what)};
  }

  static std::uint64_t asScalar(const CValue& v) {
    switch (v.kind) {
      case CValue::Kind::Int:
      case CValue::Kind::Bool: return static_cast<std::uint64_t>(v.i);
      case CValue::Kind::Float: return scalarElement(v.f);
      case CValue::Kind::None: return 0;
      case CValue::Kind::Text: return static_cast<std::uint64_t>(v.i);
      default: fail("expected a scalar");
    }
  }

  static std::int64_t normDim(std::int64_t dim, std::size_t rank) {
    const std::optional<std::size_t> d = wrapDim(dim, rank);
    if (!d) fail("dimension out of range");
    return static_cast<std::int64_t>(*d);
  }

  const Layout& tensorArg(const CValue& v, const char* what) {
    if (!v.isTensor()) fail(std::string("expected a tensor for ") + what);
    return v.t;
  }

  std::uint32_t newOpaque() { return opaqueSlots_++; }

  // The static shape of a node's annotation, or nullopt.
  std::optional<Shape> annotatedShape(std::size_t node) const {
    const NodeFacts& f = analysis_->nodes[node];
    if (!f.hasShape) return std::nullopt;
    if (f.rank > Shape::kMaxRank) fail("rank above " + std::to_string(Shape::kMaxRank) + " (element tier)");
    Shape shape;
    for (std::uint32_t d = 0; d < f.rank; ++d) shape.push_back(analysis_->shapes[f.shapeAt + d]);
    return shape;
  }

  // --- the walk (compiler.cpp) ---

  void begin();

  // Rough sizes for a typical program, so the pools rarely grow.
  void reservePools();

  void walk(std::size_t first);

  std::size_t current_ = 0;

  // --- replaying a node the parent compiled alike (sharing.cpp) ---
  //
  // A fork (alias views, F, the placed program) goes on compiling nodes its parent has
  // compiled too, most of them alike: after a `*_copy` view made an alias, a view that F
  // copies, an in-place op that F makes a new version of, or an inserted copy_, the nodes that
  // do not read what differs read the same values as in the parent and, with the storages
  // mirrored (see storages_), allocate the same storages. Compiling node i depends only on
  // the node, its facts, the values its arguments name (the storages they live in included),
  // the model where the node's compile reads it (dependsOnModel), and three counters (main
  // storages, opaque slots, list items): with all of them equal to the parent's before its
  // node j, node i compiles to the parent's steps and value for j, with indices into the
  // program's pools moved by where the pools stand (a copy_ before it added a kernel and its
  // operands). Those are then copied instead of compiled again. Never for a `*_copy` view in
  // another view mode than the parent's, what reads other nodes' facts (a tuple result reads
  // its getitems' annotations), nor where the parent's node made side storages.

  // Where the pools and counters stand before a node's compile (after node j: before node
  // j + 1; the output node comes last and is never replayed). Not initialised: every node a
  // fork may replay from is recorded before it is read (forks start at or after their parent's
  // fork point, and the parent has finished).
  struct Marks {
    std::uint32_t steps, offsets, spans, operands, ints, lists, storages, side, opaque;
    std::size_t budget;
  };
  static std::shared_ptr<Marks[]> newMarks(std::size_t n) { return std::shared_ptr<Marks[]>(new Marks[n]); }
  std::shared_ptr<Marks[]> marks_;  // per node, as compiled (or replayed) here; a fork has its own
  bool recordsMarks_ = true;        // F's are never read (see takeValueFork)
  bool replaysParent_ = false;      // a fork that replays its parent's nodes (see resume())
  // Per node: the parent's node whose value (as the parent left it) its value is, field by
  // field (sameValue), or kNotParents. Kept as nodes are compiled, replayed and rebound, so that
  // comparing an argument with the parent's is one look-up.
  static constexpr std::uint32_t kNotParents = 0xffffffffu;
  std::vector<std::uint32_t> parentNode_;
  bool parentHasProgram_ = true;  // the parent compiled the same program (node i is its node i)
  std::size_t parentCursor_ = 0;  // else: the parent's next node to match (placed forks)

  Marks marks() const {
    Marks m;
    m.steps = static_cast<std::uint32_t>(out_.steps.size());
    m.offsets = static_cast<std::uint32_t>(out_.offsets.size());
    m.spans = static_cast<std::uint32_t>(out_.spans.size());
    m.operands = static_cast<std::uint32_t>(out_.operands.size());
    m.ints = static_cast<std::uint32_t>(out_.ints.size());
    m.lists = static_cast<std::uint32_t>(lists_.size());
    m.storages = static_cast<std::uint32_t>(storages_.size());
    m.side = static_cast<std::uint32_t>(sides_.size());
    m.opaque = opaqueSlots_;
    m.budget = budget_;
    return m;
  }

  // The same storage here and in `other` (its table entry).
  bool sameStorage(std::uint32_t s, const ElementCompiler& other) const;

  // A value here and one of `other`: the same in the fields a value of its kind is read by
  // (a list item by item, a tensor with its storage).
  bool sameValue(const CValue& x, const CValue& y, const ElementCompiler& other) const;

  // An argument here and the same argument (of an equal node) in `other`, the parent: what
  // it names has the same value in both (see parentNode_). Literals are equal with their
  // nodes.
  // Inlined in replay() (a test per argument of every node a fork meets); lists are a call.
  [[gnu::always_inline]] bool sameArgument(const ArgRef& x, const ArgRef& y, const ElementCompiler& other) const {
    if (x.arg->isRef()) return x.node != ArgRef::kNoNode && y.node != ArgRef::kNoNode && parentNode_[x.node] == y.node;
    return !x.arg->isSequence() || sameItems(x, y, other);
  }
  [[gnu::noinline]] bool sameItems(const ArgRef& x, const ArgRef& y, const ElementCompiler& other) const;

  static std::uint32_t moved(std::uint32_t at, std::int64_t by);
  static void moveSpan(Span& s, std::int64_t by);

  // Whether every pool index of a parent's step lies in the ranges its node appended (so that
  // moving the ranges moves everything the step reads).
  static bool stepWithin(const ElementProgram& p, const Step& k, const Marks& b, const Marks& a);

  static constexpr std::size_t kNoParentNode = static_cast<std::size_t>(-1);

  // The parent's node that node i is (the same node of the same program; for a placed program
  // the parent's next node, if node i equals it: the inserted copies match none), or
  // kNoParentNode. Never the parent's last node (the output).
  // The analysis made `like` the parent's program has matched the nodes so already (see
  // Analysis::likeNodes; the cursor starts at placedFrom_, at most its equal leading nodes,
  // and so goes through the same matches), without comparing them again.
  std::size_t parentNodeOf(std::size_t i);

  // Compiling node i, which is the parent's node j: fresh() takes the parent's storages of j
  // in their order while the sizes asked for are theirs (see storages_).
  void mirrorNode(std::size_t j);

  // Node i (the parent's node j) compiled by copying what the parent compiled for j, if that
  // is what compiling it would give (see above); false (nothing done) if not.
  bool replay(std::size_t i, std::size_t j);

  void emit(const Step& step) { out_.steps.push_back(step); }

  // Where a value is read from. A list's tensors are read in order: the spans of its items
  // (nested lists flattened) are appended to the span pool in that order, one range.
  Source sourceOf(const CValue& v) {
    Source s{};
    switch (v.kind) {
      case CValue::Kind::Tensor:
        s.kind = Source::Kind::Offsets;
        s.spansAt = static_cast<std::uint32_t>(out_.spans.size());
        out_.spans.push_back(spanOf(v.t));
        s.spansCount = 1;
        break;
      case CValue::Kind::List:
        s.kind = Source::Kind::Offsets;
        s.spansAt = static_cast<std::uint32_t>(out_.spans.size());
        for (const CValue& item : itemsOf(v)) {  // makes no list
          Source inner = sourceOf(item);
          if (inner.kind != Source::Kind::Offsets) s.constant = combine(s.constant, inner.constant);
        }
        s.spansCount = static_cast<std::uint32_t>(out_.spans.size()) - s.spansAt;
        break;
      case CValue::Kind::Opaque:
        s.kind = Source::Kind::Opaque;
        s.slot = v.slot;
        break;
      case CValue::Kind::Int:
      case CValue::Kind::Bool: s.constant = combine(1, static_cast<std::uint64_t>(v.i)); break;
      case CValue::Kind::Float: s.constant = combine(2, scalarElement(v.f)); break;
      case CValue::Kind::Text: s.constant = combine(3, static_cast<std::uint64_t>(v.i)); break;
      case CValue::Kind::None: s.constant = 0; break;
    }
    return s;
  }

  void fillFromSeed(const Layout& l, std::uint64_t nameHash) {
    Step s{};
    s.kind = StepKind::FillSeed;
    s.dest = spanOf(l);
    s.a = nameHash;
    emit(s);
  }

  void emitOpaqueCombine(std::uint32_t slot, std::uint32_t from, std::uint64_t salt) {
    Step s{};
    s.kind = StepKind::OpaqueCombine;
    s.slot = slot;
    s.from = from;
    s.b = salt;
    emit(s);
  }

  // dest[e] = src[e], element by element.
  void emitCopy(const Layout& from, const Layout& to) {
    Step s{};
    s.kind = StepKind::Copy;
    s.src = spanOf(from);
    s.dest = spanOf(to);
    emit(s);
  }

  // --- nodes: placeholders, constants, calls (compiler.cpp) ---

  void compilePlaceholder(const Node& n);

  void compileGetAttr(const Node& n);

  struct Call {
    const Node& node;
    OpInfo info;
    // Bound to schema positions (schema ops only): a node's value itself for a reference (no
    // copy), else a literal in ElementCompiler::scratch_->literals.
    std::vector<const CValue*> args;
    std::span<const ArgRef> bound;  // the same arguments as written (for rebinding)

    Call(const Node& n, const OpInfo& i, std::vector<const CValue*> a, std::span<const ArgRef> b)
        : node(n), info(i), args(std::move(a)), bound(b) {}

    // By name, a literal: its length is known where it is called, so the comparisons with the
    // schema's names compile to a few instructions (a kernel's compile asks for several
    // arguments by name, in every compile and fork).
    template <std::size_t N>
    const CValue& arg(const char (&name)[N]) const {
      const std::size_t i = indexOf<N>(name);
      if (i == kNone) fail("schema of " + node.target + " has no argument '" + std::string(name) + "'");
      return *args[i];
    }
    template <std::size_t N>
    bool has(const char (&name)[N]) const {
      return indexOf<N>(name) != kNone;
    }
    // The argument `name`, or nullptr if the schema has none: has() and arg() in one look-up.
    template <std::size_t N>
    const CValue* find(const char (&name)[N]) const {
      const std::size_t i = indexOf<N>(name);
      return i == kNone ? nullptr : args[i];
    }

   private:
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    template <std::size_t N>
    std::size_t indexOf(const char (&name)[N]) const {
      const std::vector<SchemaArgument>& params = info.schema->arguments;
      for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].name.size() == N - 1 && std::memcmp(params[i].name.data(), name, N - 1) == 0) return i;
      return kNone;
    }
  };

  void compileCall(const Node& n);

  // F: the node argument k of `call` names (item `item` of a list argument) is bound to its
  // new version `next` for every later reference, the output included (from the end of the
  // call on: see compileCall).
  void rebind(const Call& call, std::size_t k, std::size_t item, bool isItem, const CValue& next);

  static std::size_t nodeOfRef(const ArgRef& r);

  void compileGetitem(const Node& n);

  // --- uninterpreted ops (uninterpreted.cpp) ---

  // Everything a hash reads: tensors (by spans), opaque digests, and a constant for the rest.
  // The lists are compiler scratch (one digest is collected at a time).
  struct HashInputs {
    std::vector<Span>& tensors;
    std::vector<std::uint32_t>& opaques;
    std::uint64_t constant = 0;
  };

  HashInputs newHashInputs();

  void collectHashInputs(const CValue& v, HashInputs& h);

  // A step computing the digest of its inputs into a fresh opaque slot; returns the slot.
  std::uint32_t emitDigest(const HashInputs& h, std::uint64_t opId);

  // Fills a layout with H(digest, channel, position).
  void emitHashFill(const Layout& l, std::uint32_t digestSlot, std::uint64_t channel);

  // A schema-less target, in the behaviour ExecOptions::behaviour draws for it (oracle.h:
  // HavocBehaviour).
  void compileSchemaless(const Node& n, const OpInfo& info);
  // An element of an opaque (schema-less) result that is not a view: a fresh tensor of `shape`
  // filled from digest `from`, or an opaque value derived from it when the shape is unknown.
  CValue derivedElement(const std::optional<Shape>& shape, std::uint32_t from, std::uint64_t salt);

  // The tensors of a value (a list's items in order, flattened).
  void collectTensors(const CValue& v, std::vector<Layout>& out) const;

  // A result of shape `shape` that is a view of argument `arg`: the argument itself when the
  // shapes agree, else a contiguous view from the argument's start (when the argument is
  // contiguous and holds enough elements) or from its storage's; nullopt when it fits neither.
  std::optional<Layout> viewForResult(const Layout& arg, const Shape& shape) const;

  // A tuple result some of whose elements the draw makes views of arguments: a list of the
  // elements the getitems take (see compileSchemaless); nullopt when none is a view.
  std::optional<CValue> viewElements(const HavocBehaviour& behaviour, const std::vector<Layout>& tensors,
                                     std::uint32_t digest);

  static bool sameAliasSet(const SchemaType& a, const SchemaType& b) {
    return a.alias && b.alias && !a.alias->beforeSets.empty() && a.alias->beforeSets == b.alias->beforeSets;
  }

  // Uninterpreted op with a schema.
  CValue compileHashOp(const Call& call);

  // A result's shape: the node's annotation for a single return; for a tuple (printed without
  // an annotation), the annotation of a getitem user taking element r.
  std::optional<Shape> returnShape(const Call& call, std::size_t r) const;

  bool takesElement(std::size_t getitem, std::size_t r) const;

  // Element r of a tuple result is read: some getitem takes it.
  bool elementUsed(std::size_t r) const;

  CValue hashReturn(const Call& call, std::size_t r, std::uint32_t digest);

  // _share_alloc_with_arg_idx = k (storage model): the result lives in argument k's storage.
  // Inline, the test most calls stop at (no such meta); the move itself is a call of its own.
  void shareAlloc(const Call& call, CValue& result) {
    const std::optional<int>& k = analysis_->nodes[current_].shareAllocArgIndex;
    if (!k || valueModel_ || !result.isTensor()) return;
    shareAllocAt(call, result, *k);
  }
  [[gnu::noinline]] void shareAllocAt(const Call& call, CValue& result, int index);

  // --- views (views.cpp) ---

  Layout viewLayout(const Call& call, bool& needsCopy);

  std::vector<Layout> listViewLayouts(const Call& call);

  CValue materialize(const Layout& from);

  mutable bool viewModeSeen_ = false;

  bool viewIsCopy(const Call& call) const;

  CValue compileView(const Call& call);

  // split_with_sizes_copy.out / unbind_copy.int_out: the parts copied into `out`.
  CValue compileListViewOut(const Call& call);

  // --- interpreted kernels (kernels.cpp) ---

  Operand operandOf(const CValue& v, const Shape& target);

  Operand operandOwnShape(const CValue& v, const char* what);

  // A scalar's shape is [] (a reference: a Shape is a large record).
  const Shape& shapeOf(const CValue& v) const { return v.isTensor() ? v.t.sizes : noShape_; }
  const Shape noShape_;

  // A kernel step over scratch_->ins, computing `n` elements into `dest`; `k` holds the computation
  // and its parameters.
  void emitKernel(const Step& step, Span dest, std::size_t n) {
    Step& k = out_.steps.emplace_back(step);  // completed in place (a Step is a large record)
    k.kind = StepKind::Kernel;
    k.operandsAt = static_cast<std::uint32_t>(out_.operands.size());
    k.operandsCount = static_cast<std::uint32_t>(scratch_->ins.size());
    out_.operands.insert(out_.operands.end(), scratch_->ins.begin(), scratch_->ins.end());
    k.dest = dest;
    k.outSize = static_cast<std::uint32_t>(n);
  }

  // An index table of n entries in the offset pool: its start.
  std::uint32_t newTable(std::size_t n) {
    std::uint32_t at = static_cast<std::uint32_t>(out_.offsets.size());
    out_.offsets.resize(out_.offsets.size() + n);
    return at;
  }

  // The destination of a single tensor result of shape `shape`, and the result value.
  CValue destinationFor(const Call& call, const Shape& shape, Span& dest);

  // Compiles one kernel: operands, output shape, the computation; in-place ops compute with
  // the self's shape and write the self; out= variants write `out`.
  CValue compileKernel(const Call& call);

  Operand factoryFill(const Call& call, const Shape& shape);

  // Emits kernel `k` over scratch_->ins with a result of shape `shape`.
  CValue finishSingle(const Call& call, const Step& k, const Shape& shape);

  CValue compileReduction(const Call& call);

  // index_put / index.Tensor: advanced indexing with a list of optional index tensors.
  CValue compileAdvancedIndex(const Call& call);

  // index_copy / index_add / index_select: an index along one dimension.
  CValue compileIndexDim(const Call& call);

  CValue compileScatter(const Call& call);

  // slice_scatter, select_scatter, cat, stack: the output assembled from pieces placed at
  // static positions.
  CValue compileAssemble(const Call& call);

  // Positions of a layout over a contiguous buffer of `total` elements (not arena offsets),
  // listed in the offset pool.
  Span relativeOffsets(const Layout& l, std::int64_t total);

  CValue compileForeach(const Call& call);

  // --- the end: observations and end-of-run writes (compiler.cpp) ---

  void compileEnd();
};

}  // namespace wb::oracle::detail
