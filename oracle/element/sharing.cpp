// oracle/element/sharing.cpp: the sharing of element compiles (ElementCompiler::compileShared):
// compiles that agree up to some node (the view modes, F, a program and its placed version)
// share the work up to it through forks, and a fork copies (replays) the nodes its parent
// compiled alike instead of compiling them again.
//
// An optimisation of the plain compile, which is the reference (ElementCompiler::compile: one
// program, one view mode, one model, every node compiled): whatever is shared, each program
// must compile, or fail with the same message, and run exactly as its plain compile does.
// Tests (tests/oracle_element_test.cpp): OracleElement.ForkedCompilesMatchPlainCompiles
// compares every shared program with its plain compile, and counts each way a program is made
// here (each fork, forks of a compile that failed after the fork, no fork at all, replays);
// OracleElement.ForkedRunsStartFromTheirParentsStateAndMatchFreshRuns does the same for the
// runs of forked programs, which start from the state their parent's run kept at the fork.
#include <algorithm>

#include "oracle/element/compiler.h"

namespace wb::oracle::detail {

ElementCompiler::Programs ElementCompiler::compileShared(bool value, const Analysis* placed, std::size_t placedFrom) {
  forkWanted_ = true;
  valueForkWanted_ = value;
  placed_ = placed;
  placedFrom_ = placedFrom;
  Programs out{compile(), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  if (valueFork_) out.value = valueFork_->resume();
  ElementCompiler* alias = nullptr;  // this program's alias-views compile, if continued
  if (out.copyViews && (*out.copyViews)->dependsOnViewMode) {
    if (fork_) {
      out.aliasViews = fork_->resume();
      alias = fork_.get();
    } else {  // not expected (the fork precedes the first `*_copy` view): compile afresh
      ExecOptions aliasViews = options_;
      aliasViews.viewMode = ViewMode::AliasViews;
      out.aliasViews = ElementCompiler(*analysis_, aliasViews).compile();
    }
  }
  if (!placed || !placedFork_) return out;
  ElementCompiler& p = *placedFork_;
  out.placed = p.resume();
  if (!*out.placed || !(**out.placed)->dependsOnViewMode) return out;
  if (p.fork_) out.placedAlias = p.fork_->resume();
  else if (alias && alias->placedFork_) out.placedAlias = alias->placedFork_->resume();
  else {
    ExecOptions aliasViews = p.options_;
    aliasViews.viewMode = ViewMode::AliasViews;
    out.placedAlias = ElementCompiler(*placed, aliasViews).compile();
  }
  return out;
}

ElementCompiler::Compiled ElementCompiler::resume() {
  return finish([&] {
    // Mirroring needs the parent's storage table (it has finished: see compileShared), and
    // room above its arena for this one's own storages that fits under the arena cap
    // whatever this compile allocates (which is charged: at most maxElements).
    mirrors_ = replaysParent_ && parent_ && parent_->finished_ && parent_->recordsMarks_ &&
               parent_->arenaEnd() + options_.maxElements < (std::size_t{1} << 31);
    if (mirrors_) sideEnd_ = static_cast<std::int64_t>(parent_->arenaEnd());
    replaysParent_ = mirrors_;
    if (recordsMarks_) marks_ = newMarks(program_->graph.nodes.size());
    walk(forkedAt_);
    compileEnd();
  });
}

std::shared_ptr<ElementCompiler> ElementCompiler::forkAt(std::size_t i, std::size_t nodes) {
  // Where the fork's run may start from this one's (ElementProgram::forkedAt).
  const ElementProgram::ForkPoint here{static_cast<std::uint32_t>(out_.steps.size()), arenaEnd(), opaqueSlots_};
  // The values of nodes i and later are still as begin() made them (no node from i on has
  // been compiled, and only F, never forked from, rebinds earlier ones): the fork takes the
  // first i and makes the rest afresh, rather than copying them with the compiler (a value
  // is a large record). values_ is set aside while the compiler is copied.
  Pool<CValue> values = std::move(values_);
  values_ = Pool<CValue>();
  auto fork = std::make_shared<ElementCompiler>(*this);
  values_ = std::move(values);
  // Made fresh, then the first i copied in one block (a CValue is trivially copyable).
  fork->values_.reserve(nodes);
  fork->values_.resize(nodes);
  const std::size_t kept = std::min(i, nodes);  // i <= nodes (placed forks: sharedPrefix)
  std::copy_n(values_.data(), kept, fork->values_.data());
  fork->marks_.reset();  // it records its own, from i on (see resume())
  fork->parent_ = this;
  fork->finished_.reset();
  fork->out_.forkPoints.clear();
  fork->out_.forkedAt = here;
  out_.forkPoints.push_back(here);
  fork->forkWanted_ = fork->valueForkWanted_ = false;
  fork->fork_.reset();
  fork->valueFork_.reset();
  fork->placed_ = nullptr;
  fork->placedFork_.reset();
  fork->forkedAt_ = i;  // its pools were copied with room to grow (Pool)
  fork->replaysParent_ = !valueModel_;  // see replay()
  fork->parentHasProgram_ = true;
  fork->parentCursor_ = i;
  // The values of nodes before i are this one's (copied).
  fork->parentNode_.resize(program_->graph.nodes.size());
  for (std::size_t k = 0; k < fork->parentNode_.size(); ++k)
    fork->parentNode_[k] = k < i ? static_cast<std::uint32_t>(k) : kNotParents;
  return fork;
}

void ElementCompiler::takePlacedFork() {
  const std::size_t n = placed_->program->graph.nodes.size();
  placedFork_ = forkAt(placedFrom_, n);
  ElementCompiler& p = *placedFork_;
  p.analysis_ = placed_;
  p.program_ = placed_->program;
  p.options_.placedProgram = true;
  p.declaredAt_.resize(n);
  p.out_.nodeStepEnd.resize(n);
  p.parentNode_.resize(n, kNotParents);
  p.forkWanted_ = forkWanted_ && !fork_;
  p.parentHasProgram_ = false;  // its nodes from placedFrom_ on are matched to this one's (replay())
}

bool ElementCompiler::dependsOnModel(std::size_t i) const {
  const NodeOp op = program_->graph.nodes[i].op;
  if (op != NodeOp::CallFunction && op != NodeOp::CallModule) return false;
  const NodeFacts& f = analysis_->nodes[i];
  if (f.shareAllocArgIndex) return true;
  // A schema-less target runs the draw in the storage model and draw 0 under F.
  if (!f.info.schema) return options_.behaviour != 0 && !f.info.getitem;
  if (f.info.annotated) return true;
  const bool copiedAlike = f.info.copyVariant && !f.info.outVariant && options_.viewMode == ViewMode::CopyViews;
  return isViewKind(f.info.kind) && !copiedAlike;
}

void ElementCompiler::takeValueFork(std::size_t i) {
  valueFork_ = forkAt(i, program_->graph.nodes.size());
  valueFork_->valueModel_ = valueFork_->out_.valueModel = valueFork_->options_.valueSemantics = true;
  // F replays the nodes whose compile does not read the model (replay()); nothing forks
  // from it, so it records no marks.
  valueFork_->recordsMarks_ = false;
  // F reads no view mode (viewIsCopy answers before it looks), whatever the copy-views
  // compile has seen before the fork.
  valueFork_->viewModeSeen_ = false;
}

bool ElementCompiler::sameStorage(std::uint32_t s, const ElementCompiler& other) const {
  if (s & kSideStorage) {
    const std::uint32_t k = s & ~kSideStorage;
    return k < sides_.size() && k < other.sides_.size() && sides_[k].base == other.sides_[k].base &&
           sides_[k].size == other.sides_[k].size;
  }
  return s < storages_.size() && s < other.storages_.size() && storages_[s].base == other.storages_[s].base &&
         storages_[s].size == other.storages_[s].size;
}

bool ElementCompiler::sameValue(const CValue& x, const CValue& y, const ElementCompiler& other) const {
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case CValue::Kind::None: return true;
    case CValue::Kind::Int:
    case CValue::Kind::Text: return x.i == y.i;
    case CValue::Kind::Bool: return x.i == y.i && x.b == y.b;
    case CValue::Kind::Float: return std::memcmp(&x.f, &y.f, sizeof x.f) == 0;
    case CValue::Kind::Opaque: return x.slot == y.slot;
    case CValue::Kind::Tensor:
      return x.t.storage == y.t.storage && x.t.offset == y.t.offset && x.t.sizes == y.t.sizes &&
             x.t.strides == y.t.strides && sameStorage(x.t.storage, other);
    case CValue::Kind::List:
      if (x.itemsAt != y.itemsAt || x.itemsCount != y.itemsCount || x.itemsAt + x.itemsCount > lists_.size() ||
          y.itemsAt + y.itemsCount > other.lists_.size())
        return false;
      for (std::uint32_t k = 0; k < x.itemsCount; ++k)
        if (!sameValue(lists_[x.itemsAt + k], other.lists_[y.itemsAt + k], other)) return false;
      return true;
  }
  return false;
}

bool ElementCompiler::sameItems(const ArgRef& x, const ArgRef& y, const ElementCompiler& other) const {
  const std::span<const ArgRef> xs = analysis_->items(x), ys = other.analysis_->items(y);
  for (std::size_t k = 0; k < xs.size(); ++k)
    if (!sameArgument(xs[k], ys[k], other)) return false;
  return true;
}

std::uint32_t ElementCompiler::moved(std::uint32_t at, std::int64_t by) {
  return static_cast<std::uint32_t>(static_cast<std::int64_t>(at) + by);
}

void ElementCompiler::moveSpan(Span& s, std::int64_t by) {
  if (s.listed) s.at = moved(s.at, by);
}

bool ElementCompiler::stepWithin(const ElementProgram& p, const Step& k, const Marks& b, const Marks& a) {
  auto spanWithin = [&](const Span& s) { return !s.listed || (s.at >= b.offsets && s.at + s.count <= a.offsets); };
  auto rangeWithin = [](std::uint32_t at, std::uint32_t count, std::uint32_t begin, std::uint32_t end) {
    return at >= begin && at + count <= end;
  };
  if (!spanWithin(k.dest) || !spanWithin(k.src)) return false;
  switch (k.kind) {
    case StepKind::Digest:
      return rangeWithin(k.listAt, k.listCount, b.spans, a.spans) &&
             rangeWithin(k.slotsAt, k.slotsCount, b.offsets, a.offsets);
    case StepKind::Kernel: {
      if (!rangeWithin(k.operandsAt, k.operandsCount, b.operands, a.operands)) return false;
      for (std::uint32_t o = 0; o < k.operandsCount; ++o)
        if (!spanWithin(p.operands[k.operandsAt + o].span)) return false;
      switch (k.compute) {
        case Compute::Reduce: return rangeWithin(k.mapA, k.mapCount, b.offsets, a.offsets);
        case Compute::IndexTensor:
        case Compute::IndexPut:
          if (!rangeWithin(k.listAt, 2 * k.listCount, b.ints, a.ints)) return false;
          [[fallthrough]];
        case Compute::IndexSelect:
        case Compute::IndexCopyAdd:
        case Compute::Scatter:
          return rangeWithin(k.mapA, k.mapCount, b.offsets, a.offsets) &&
                 rangeWithin(k.mapB, 0, b.offsets, a.offsets);
        case Compute::Assemble: {
          if (!rangeWithin(k.listAt, k.listCount, b.spans, a.spans)) return false;
          for (std::uint32_t m = 0; m < k.listCount; ++m)
            if (!spanWithin(p.spans[k.listAt + m])) return false;
          return true;
        }
        default: return true;
      }
    }
    default: return true;
  }
}

std::size_t ElementCompiler::parentNodeOf(std::size_t i) {
  std::size_t j = i;
  const std::vector<Node>& theirs = parent_->program_->graph.nodes;
  if (!parentHasProgram_) {
    if (parentCursor_ >= theirs.size()) return kNoParentNode;
    const bool matched = analysis_->likeProgram == parent_->program_
                             ? analysis_->likeNodes[i] == parentCursor_
                             : sameNodeText(theirs[parentCursor_], parent_->program_->graph,
                                            program_->graph.nodes[i], program_->graph);
    if (!matched) return kNoParentNode;
    j = parentCursor_++;
  }
  return j + 1 < theirs.size() ? j : kNoParentNode;
}

void ElementCompiler::mirrorNode(std::size_t j) {
  const Marks& b = parent_->marks_[j];
  if (storages_.size() != b.storages) return;  // not expected: the main table is the parent's
  mirrorNext_ = b.storages;
  mirrorEnd_ = parent_->marks_[j + 1].storages;
}

bool ElementCompiler::replay(std::size_t i, std::size_t j) {
  if (options_.traceNodes || (valueModel_ && dependsOnModel(i))) return false;
  const Node& n = program_->graph.nodes[i];
  if (n.op != NodeOp::CallFunction && n.op != NodeOp::CallModule) return false;
  const ElementCompiler& parent = *parent_;
  const ElementProgram* done = parent.finished_.get();
  if (!done || parent.valueModel_ || !parent.recordsMarks_) return false;
  const NodeFacts& f = analysis_->nodes[i];
  const NodeFacts& g = parent.analysis_->nodes[j];
  if (!f.getitemUsers.empty() || !g.getitemUsers.empty() || f.rawCount != g.rawCount) return false;
  // A `*_copy` view compiles alike in the same view mode (in the alias-views one, as the
  // program does or does not return it), and under F as in the copy-views mode (a copy).
  const bool readsViewMode = f.info.copyVariant && !valueModel_;
  if (readsViewMode && (options_.viewMode != parent.options_.viewMode ||
                        (options_.viewMode == ViewMode::AliasViews && f.keptViewCopy != g.keptViewCopy)))
    return false;
  const Marks& b = parent.marks_[j];
  const Marks& a = parent.marks_[j + 1];
  if (storages_.size() != b.storages || a.side != b.side || opaqueSlots_ != b.opaque || lists_.size() != b.lists)
    return false;
  for (std::uint32_t k = 0; k < f.rawCount; ++k)
    if (!sameArgument(analysis_->argRefs[f.rawAt + k], parent.analysis_->argRefs[g.rawAt + k], parent)) return false;
  for (std::size_t k = 0; k < n.kwargs.size(); ++k)
    if (!sameArgument(analysis_->argRefs[f.kwAt + k], parent.analysis_->argRefs[g.kwAt + k], parent)) return false;
  for (std::uint32_t s = b.steps; s < a.steps; ++s)
    if (!stepWithin(*done, done->steps[s], b, a)) return false;

  // Alike: the parent's work for node j, appended and moved to where the pools stand.
  charge(a.budget - b.budget);  // fails as the compile would (the same message)
  const std::int64_t offsetsBy = static_cast<std::int64_t>(out_.offsets.size()) - b.offsets;
  const std::int64_t spansBy = static_cast<std::int64_t>(out_.spans.size()) - b.spans;
  const std::int64_t operandsBy = static_cast<std::int64_t>(out_.operands.size()) - b.operands;
  const std::int64_t intsBy = static_cast<std::int64_t>(out_.ints.size()) - b.ints;
  auto append = [](auto& to, const auto& from, std::uint32_t begin, std::uint32_t end) {
    if (begin != end) to.insert(to.end(), from.begin() + begin, from.begin() + end);  // most stay as they are
  };
  const std::size_t firstStep = out_.steps.size(), firstSpan = out_.spans.size(), firstOperand = out_.operands.size();
  append(out_.steps, done->steps, b.steps, a.steps);
  append(out_.offsets, done->offsets, b.offsets, a.offsets);  // arena offsets and slots: as they are
  append(out_.spans, done->spans, b.spans, a.spans);
  append(out_.operands, done->operands, b.operands, a.operands);
  append(out_.ints, done->ints, b.ints, a.ints);
  append(storages_, parent.storages_, b.storages, a.storages);
  append(lists_, parent.lists_, b.lists, a.lists);
  opaqueSlots_ = a.opaque;
  // By pointer: with an index, each pool's size would be read again after every record
  // written (a store may alias the vector's own pointers).
  for (Span *s = out_.spans.data() + firstSpan, *end = out_.spans.data() + out_.spans.size(); s != end; ++s)
    moveSpan(*s, offsetsBy);
  for (Operand *o = out_.operands.data() + firstOperand, *end = out_.operands.data() + out_.operands.size(); o != end; ++o)
    moveSpan(o->span, offsetsBy);
  for (Step *step = out_.steps.data() + firstStep, *end = out_.steps.data() + out_.steps.size(); step != end; ++step) {
    Step& k = *step;
    moveSpan(k.dest, offsetsBy);
    moveSpan(k.src, offsetsBy);
    if (k.kind == StepKind::Digest) {
      k.listAt = moved(k.listAt, spansBy);
      k.slotsAt = moved(k.slotsAt, offsetsBy);
    }
    if (k.kind != StepKind::Kernel) continue;
    k.operandsAt = moved(k.operandsAt, operandsBy);
    switch (k.compute) {
      case Compute::Reduce: k.mapA = moved(k.mapA, offsetsBy); break;
      case Compute::IndexTensor:
      case Compute::IndexPut: k.listAt = moved(k.listAt, intsBy); [[fallthrough]];
      case Compute::IndexSelect:
      case Compute::IndexCopyAdd:
      case Compute::Scatter:
        k.mapA = moved(k.mapA, offsetsBy);
        k.mapB = moved(k.mapB, offsetsBy);
        break;
      case Compute::Assemble: k.listAt = moved(k.listAt, spansBy); break;
      default: break;
    }
  }
  values_[i] = parent.values_[j];
  if (readsViewMode) viewModeSeen_ = true;  // as viewIsCopy() would have noted
  return true;
}

std::size_t replayedNodes(const ElementProgram& exe) { return exe.replayedNodes; }
ElementOrigin originOf(const ElementProgram& exe) { return {exe.forked, exe.forkedFrom.get()}; }

ElementPrograms compileElementShared(const Analysis& analysis, const ExecOptions& options, bool value,
                                     const Analysis* placed, std::size_t placedFrom) {
  ExecOptions copyViews = options;
  copyViews.viewMode = ViewMode::CopyViews;
  copyViews.valueSemantics = false;
  copyViews.placedProgram = false;
  auto [copy, alias, valueModel, placedCopy, placedAlias] =
      ElementCompiler(analysis, copyViews).compileShared(value, placed, placedFrom);
  return {std::move(copy), std::move(alias), std::move(valueModel), std::move(placedCopy), std::move(placedAlias)};
}

}  // namespace wb::oracle::detail
