// oracle/oracle.cpp: the public entry points of the interpreters (compile, run, compare).
#include "oracle/oracle.h"

#include "oracle/ops.h"

namespace wb::oracle {

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
  if (exe.impl->element) return detail::runElement(*exe.impl->element, endings, inputs, recordNodeHashes);
  return detail::runStorage(*exe.impl->storage, endings, inputs, recordNodeHashes);
}

RunResult run(const Executable& exe, Semantics semantics, InputSet inputs, bool recordNodeHashes) {
  const Semantics endings[] = {semantics};
  return std::move(runEndings(exe, endings, inputs, recordNodeHashes).front());
}

std::optional<Difference> firstDifference(const RunResult& expected, const RunResult& actual) {
  auto compare = [](const std::vector<Observation>& a, const std::vector<Observation>& b,
                    bool isOutput) -> std::optional<Difference> {
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      Difference d;
      d.isOutput = isOutput;
      d.index = i;
      if (i >= a.size() || i >= b.size()) {
        d.label = i < a.size() ? a[i].label : b[i].label;
        if (i < a.size() && !a[i].values.empty()) d.expected = a[i].values[0];
        if (i < b.size() && !b[i].values.empty()) d.actual = b[i].values[0];
        return d;
      }
      if (a[i].values == b[i].values) continue;
      d.label = a[i].label;
      const auto& x = a[i].values;
      const auto& y = b[i].values;
      std::size_t e = 0;
      while (e < x.size() && e < y.size() && x[e] == y[e]) ++e;
      d.element = e;
      if (e < x.size()) d.expected = x[e];
      if (e < y.size()) d.actual = y[e];
      return d;
    }
    return std::nullopt;
  };
  if (auto d = compare(expected.placeholders, actual.placeholders, false)) return d;
  return compare(expected.outputs, actual.outputs, true);
}

}  // namespace wb::oracle
