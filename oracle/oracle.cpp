// oracle/oracle.cpp: the public entry points of the interpreters (compile, run, compare).
#include "oracle/oracle.h"

#include "oracle/ops.h"

namespace wb::oracle {

// ---------------------------------------------------------------------------------------------
// Behaviour draws (oracle.h: HavocBehaviour). Every choice is a hash of the draw, the node's
// name and what is chosen, so that it does not depend on anything the placement changes.

namespace {
constexpr std::uint64_t kWritesSalt = 0x57524954, kWholeSalt = 0x57484f4c, kResultSalt = 0x52455355;
}  // namespace

HavocBehaviour::HavocBehaviour(unsigned draw, std::string_view nodeName)
    : draw_(draw), hash_(detail::combine(detail::hashText(nodeName), draw)) {}

bool HavocBehaviour::writes(std::size_t k, std::size_t tensorArguments) const {
  if (readsOnly() || k >= tensorArguments) return false;
  const std::uint64_t how = detail::combine(hash_, kWritesSalt);
  switch (how % 4) {
    case 0: return false;                                              // no write
    case 1: return k == (how >> 8) % tensorArguments;                  // one argument
    case 2: return true;                                               // every argument
    default: return detail::combine(how, k) & 1;                       // each by a coin flip
  }
}

bool HavocBehaviour::writesWholeStorage(std::size_t k) const {
  return !readsOnly() && (detail::combine(detail::combine(hash_, kWholeSalt), k) & 1);
}

std::optional<std::size_t> HavocBehaviour::resultViewOf(std::size_t element, std::size_t tensorArguments) const {
  if (readsOnly() || tensorArguments == 0) return std::nullopt;
  const std::uint64_t h = detail::combine(detail::combine(hash_, kResultSalt), element);
  if (h % 2 == 0) return std::nullopt;
  return static_cast<std::size_t>((h >> 8) % tensorArguments);
}

std::string_view toString(ViewMode mode) { return mode == ViewMode::CopyViews ? "copy-views" : "alias-views"; }

std::string_view toString(Semantics sem) {
  switch (sem) {
    case Semantics::Par: return "S_par";
    case Semantics::Seq: return "S_seq";
    case Semantics::Value: return "F";
    case Semantics::Placed: return "placed";
  }
  return "?";
}

std::string_view toString(Tier tier) { return tier == Tier::Element ? "element" : "storage"; }

namespace {
constexpr ViewModeSet kViewModeSets[] = {ViewModeSet::None, ViewModeSet::CopyViews, ViewModeSet::AliasViews,
                                         ViewModeSet::Both};
}  // namespace

std::string_view toString(ViewModeSet modes) {
  switch (modes) {
    case ViewModeSet::None: return "";
    case ViewModeSet::CopyViews: return "copy-views";
    case ViewModeSet::AliasViews: return "alias-views";
    case ViewModeSet::Both: return "both";
  }
  return "?";
}

std::optional<ViewModeSet> viewModeSetFromString(std::string_view text) {
  for (ViewModeSet modes : kViewModeSets)
    if (toString(modes) == text) return modes;
  return std::nullopt;
}

ViewModeSet bugViewModes(const CheckReport& report) {
  bool copy = false, alias = false;
  for (const Mismatch& m : report.bugs) (m.viewMode == ViewMode::CopyViews ? copy : alias) = true;
  if (copy && alias) return ViewModeSet::Both;
  if (copy) return ViewModeSet::CopyViews;
  return alias ? ViewModeSet::AliasViews : ViewModeSet::None;
}

const ExecOptions& Executable::options() const { return impl->options; }

bool Executable::dependsOnViewMode() const {
  return impl->element ? detail::dependsOnViewMode(*impl->element) : detail::dependsOnViewMode(*impl->storage);
}

namespace detail {

Result<Executable> compileAnalysed(const Analysis& analysis, const ExecOptions& options) {
  auto compiled = std::make_shared<Compiled>();
  compiled->options = options;
  if (options.tier == Tier::Element) {
    auto r = compileElement(analysis, options);
    if (!r) return Result<Executable>::failure(r.errors);
    compiled->element = std::move(*r);
  } else {
    auto r = compileStorage(analysis, options);
    if (!r) return Result<Executable>::failure(r.errors);
    compiled->storage = std::move(*r);
  }
  Executable exe;
  exe.impl = std::move(compiled);
  return Result<Executable>::success(std::move(exe));
}

SharedExecutables compileAnalysedShared(const Analysis& analysis, const ExecOptions& options, bool value,
                                        const Analysis* placed) {
  auto withOptions = [&](ViewMode mode, bool valueModel, bool placedProgram) {
    ExecOptions o = options;
    o.viewMode = mode;
    o.valueSemantics = valueModel;
    o.placedProgram = placedProgram;
    return o;
  };
  const ExecOptions copyViews = withOptions(ViewMode::CopyViews, false, false);
  const ExecOptions aliasViews = withOptions(ViewMode::AliasViews, false, false);
  const ExecOptions valueModel = withOptions(ViewMode::CopyViews, true, false);
  const ExecOptions placedCopy = withOptions(ViewMode::CopyViews, false, true);
  const ExecOptions placedAlias = withOptions(ViewMode::AliasViews, false, true);
  SharedExecutables out;
  if (options.tier != Tier::Element) {  // separate compiles
    out.copyViews = compileAnalysed(analysis, copyViews);
    if (out.copyViews && out.copyViews->dependsOnViewMode()) out.aliasViews = compileAnalysed(analysis, aliasViews);
    if (value) out.value = compileAnalysed(analysis, valueModel);
    if (placed) {
      out.placed = compileAnalysed(*placed, placedCopy);
      if (*out.placed && (*out.placed)->dependsOnViewMode()) out.placedAlias = compileAnalysed(*placed, placedAlias);
    }
    return out;
  }
  auto wrap = [](Result<std::shared_ptr<const ElementProgram>> r, const ExecOptions& o) {
    if (!r) return Result<Executable>::failure(r.errors);
    auto compiled = std::make_shared<Compiled>();
    compiled->options = o;
    compiled->element = std::move(*r);
    Executable exe;
    exe.impl = std::move(compiled);
    return Result<Executable>::success(std::move(exe));
  };
  ElementPrograms programs =
      compileElementShared(analysis, copyViews, value, placed, placed ? sharedPrefix(analysis, *placed) : 0);
  out.copyViews = wrap(std::move(programs.copyViews), copyViews);
  if (programs.aliasViews) out.aliasViews = wrap(std::move(*programs.aliasViews), aliasViews);
  if (value) out.value = programs.value ? wrap(std::move(*programs.value), valueModel) : compileAnalysed(analysis, valueModel);
  if (placed) {
    if (!programs.placed) {  // not shared (the reference compile stopped before the fork)
      ElementPrograms own = compileElementShared(*placed, placedCopy, false, nullptr, 0);
      programs.placed = std::move(own.copyViews);
      programs.placedAlias = std::move(own.aliasViews);
    }
    out.placed = wrap(std::move(*programs.placed), placedCopy);
    if (programs.placedAlias) out.placedAlias = wrap(std::move(*programs.placedAlias), placedAlias);
  }
  return out;
}

}  // namespace detail

Result<Executable> compile(const Program& program, const SchemaTable& schemas, const ExecOptions& options) {
  return detail::compileAnalysed(detail::analyse(program, schemas), options);
}

std::vector<RunResult> runEndings(const Executable& exe, std::span<const Semantics> endings, InputSet inputs,
                                  bool recordNodeHashes) {
  if (exe.impl->element) return detail::runElement(exe.impl->element, endings, inputs, recordNodeHashes);
  return detail::runStorage(*exe.impl->storage, endings, inputs, recordNodeHashes);
}

RunResult run(const Executable& exe, Semantics semantics, InputSet inputs, bool recordNodeHashes) {
  const Semantics endings[] = {semantics};
  return std::move(runEndings(exe, endings, inputs, recordNodeHashes).front());
}

namespace {

// A RunResult as firstDifferenceOf reads runs.
struct RunResultView {
  const RunResult& run;
  const std::vector<Observation>& list(bool isOutput) const { return isOutput ? run.outputs : run.placeholders; }
  std::size_t count(bool isOutput) const { return list(isOutput).size(); }
  std::span<const std::uint64_t> of(bool isOutput, std::size_t i) const { return list(isOutput)[i].values; }
  const std::string& label(bool isOutput, std::size_t i) const { return list(isOutput)[i].label; }
};

}  // namespace

std::optional<Difference> firstDifference(const RunResult& expected, const RunResult& actual) {
  return detail::firstDifferenceOf(RunResultView{expected}, RunResultView{actual});
}

namespace detail {

void observe(const Executable& exe, std::span<const Semantics> endings, InputSet inputs, RunScratch& scratch,
             std::span<Observations> out) {
  if (exe.impl->element) return observeElement(exe.impl->element, endings, inputs, scratch, out);
  observeStorage(*exe.impl->storage, endings, inputs, scratch, out);
}

std::string observationLabel(const Executable& exe, bool isOutput, std::size_t i) {
  if (exe.impl->element) return observationLabel(*exe.impl->element, isOutput, i);
  return storageObservationLabel(*exe.impl->storage, isOutput, i);
}

}  // namespace detail

}  // namespace wb::oracle
