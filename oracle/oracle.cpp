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

BothModes compileAnalysedBothModes(const Analysis& analysis, const ExecOptions& options, bool value) {
  ExecOptions copyViews = options, aliasViews = options, valueModel = options;
  copyViews.viewMode = ViewMode::CopyViews;
  aliasViews.viewMode = ViewMode::AliasViews;
  copyViews.valueSemantics = aliasViews.valueSemantics = false;
  valueModel.viewMode = ViewMode::CopyViews;
  valueModel.valueSemantics = true;
  BothModes out;
  if (options.tier != Tier::Element) {
    out.copyViews = compileAnalysed(analysis, copyViews);
    if (out.copyViews && out.copyViews->dependsOnViewMode()) out.aliasViews = compileAnalysed(analysis, aliasViews);
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
  ElementPrograms programs = compileElementBothModes(analysis, copyViews, value);
  out.copyViews = wrap(std::move(programs.copyViews), copyViews);
  if (programs.aliasViews) out.aliasViews = wrap(std::move(*programs.aliasViews), aliasViews);
  if (programs.value) out.value = wrap(std::move(*programs.value), valueModel);
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
