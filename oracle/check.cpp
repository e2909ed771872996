// oracle/check.cpp: verdicts (`wbcheck check`): a placement against S_par, and the program's
// own findings (S_seq != S_par, S_par != F), for several input sets and both view modes.
// Checker::check runs in four phases: place, compile, then run and compare per input set and
// view mode (placeProgram, compilePrograms, runPrograms, compareRuns).
#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/reinplace_domain.h"
#include "core/validate.h"
#include "oracle/ops.h"
#include "oracle/oracle.h"

namespace wb::oracle {

namespace {

constexpr ViewMode kModes[] = {ViewMode::CopyViews, ViewMode::AliasViews};

struct Executables {
  Executable reference[2];  // per view mode: storage semantics (S_par, S_seq)
  Executable value;         // F
  Executable placed[2];     // per view mode, if the placement produced a program
  bool sameInBothModes = false;  // no `*_copy` views: the alias-views runs repeat the copy-views ones
  // The placed program is the program itself (see placedIsReference in Checker::check): the
  // placed run is the reference executable's run with the Placed ending.
  bool placedIsReference = false;
};

// Compiles everything in one tier (F only with `value`); the error of the first program that
// does not compile, in the order reference, placed (copy views), reference, placed (alias
// views), F. The analyses are shared by every compile of their program (five compiles, two
// analyses), and compiles share their common start (compileAnalysedShared). With
// `placedIsReference` (and `placed` null) the placed program is the program: nothing more is
// compiled for it.
std::optional<std::string> compileAll(const detail::Analysis& program, const detail::Analysis* placed,
                                      bool placedIsReference, bool value, Tier tier, unsigned behaviour,
                                      Executables& out) {
  ExecOptions options;
  options.tier = tier;
  options.behaviour = behaviour;
  detail::SharedExecutables all = detail::compileAnalysedShared(program, options, value, placed);
  auto why = [](const Result<Executable>& r) {
    return r.errors.empty() ? std::string("cannot compile") : r.errors.front().message;
  };
  if (!all.copyViews) return why(all.copyViews);
  out.reference[0] = out.reference[1] = *all.copyViews;
  out.placedIsReference = placedIsReference;
  if (placedIsReference) out.placed[0] = out.placed[1] = *all.copyViews;
  if (placed) {
    if (!*all.placed) return "placed program: " + why(*all.placed);
    out.placed[0] = out.placed[1] = **all.placed;
  }
  // Programs without `*_copy` views behave the same in both modes.
  out.sameInBothModes = !all.aliasViews && !all.placedAlias;
  if (all.aliasViews) {
    if (!*all.aliasViews) return why(*all.aliasViews);
    out.reference[1] = **all.aliasViews;
    if (placedIsReference) out.placed[1] = **all.aliasViews;
  }
  if (all.placedAlias) {
    if (!*all.placedAlias) return "placed program: " + why(*all.placedAlias);
    out.placed[1] = **all.placedAlias;
  }
  if (all.value) {
    if (!*all.value) return why(*all.value);
    out.value = **all.value;
  }
  return std::nullopt;
}

// Built by appending (no stream): generated programs carry findings, so most checks note a
// mismatch or two, each with this line.
std::string replayLine(const CheckOptions& options) {
  std::string s = "wbcheck check ";
  s += options.fileName.empty() ? std::string_view("FILE") : std::string_view(options.fileName);
  if (options.placedBy.empty()) {
    s += " --placement ";
    s += toString(options.placement);
  } else {
    s += " ";
    s += options.placedBy;
  }
  s += " --seed ";
  s += std::to_string(options.seed);
  if (options.inputs != 3) {
    s += " --inputs ";
    s += std::to_string(options.inputs);
  }
  if (options.behaviours != kDefaultBehaviours) {
    s += " --behaviours ";
    s += std::to_string(options.behaviours);
  }
  return s;
}

// What a node of the placed program must compute, as a traced hash, when it has no node of
// the same name in the program: a copy_ into placeholder B must leave B as S_par's end leaves
// it (the whole storage, row-major, folded as the element tier traces a result; the storage
// tier's trace and observation are both the root's digest). Nullopt for other inserted nodes.
std::optional<std::uint64_t> expectedInsertedHash(const Program& reference, const RunResult& ref, const Program& placed,
                                                  const Node& n) {
  if (n.target != "aten::copy_" || n.args.empty() || !n.args[0].isRef()) return std::nullopt;
  const std::string& buffer = placed.graph.nodes[n.args[0].node].name;
  std::size_t placeholder = 0;
  for (const Node& m : reference.graph.nodes) {
    if (!m.isPlaceholder()) break;
    if (m.name == buffer) {
      if (placeholder >= ref.placeholders.size()) return std::nullopt;
      const std::vector<std::uint64_t>& values = ref.placeholders[placeholder].values;
      if (ref.tier == Tier::Storage) return values.empty() ? std::nullopt : std::optional<std::uint64_t>(values[0]);
      std::uint64_t h = detail::traceHashStart(values.size());
      for (std::uint64_t v : values) h = detail::combine(h, v);
      return h;
    }
    ++placeholder;
  }
  return std::nullopt;
}

// The first node of the placed graph whose result differs from the reference run's: a node
// of the program (matched by name) against its result there, a copy_ against what S_par's end
// leaves in its buffer (so a copy placed before a write to its value, or after another copy
// overwrote what it reads, is named). Empty when none differs: the divergence is then only in
// the end state (a missing copy, a changed output layout).
std::string firstDivergingNode(const Program& reference, const RunResult& ref, const Program& placed,
                               const RunResult& run) {
  for (std::size_t i = 0; i < placed.graph.nodes.size() && i < run.nodeHashes.size(); ++i) {
    const Node& n = placed.graph.nodes[i];
    if (n.isOutput()) continue;
    std::optional<std::size_t> j = reference.graph.indexOf(n.name);
    if (!j) {
      if (std::optional<std::uint64_t> expected = expectedInsertedHash(reference, ref, placed, n))
        if (*expected != run.nodeHashes[i]) return n.name;
      continue;
    }
    if (*j >= ref.nodeHashes.size()) continue;
    if (ref.nodeHashes[*j] != run.nodeHashes[i]) return n.name;
  }
  return {};
}

// Compiles both programs again with node tracing and compares the per-node hashes (only on a
// mismatch, so the common path pays nothing for it).
std::string tracedFirstDivergingNode(const Program& reference, const Program& placed, const SchemaTable& schemas,
                                     Tier tier, ViewMode mode, unsigned behaviour, InputSet inputs) {
  ExecOptions options;
  options.tier = tier;
  options.viewMode = mode;
  options.behaviour = behaviour;
  options.traceNodes = true;
  Result<Executable> ref = compile(reference, schemas, options);
  options.placedProgram = true;
  Result<Executable> run2 = compile(placed, schemas, options);
  if (!ref || !run2) return {};
  return firstDivergingNode(reference, run(*ref, Semantics::Par, inputs, true), placed,
                            run(*run2, Semantics::Placed, inputs, true));
}

}  // namespace

int CheckReport::exitCode() const {
  if (verdict == Verdict::Error) return 2;
  if (verdict == Verdict::PlacementBug) return 1;
  return strict && !findings.empty() ? 1 : 0;
}

namespace {

// A check in four phases, as Checker::check reads: place the program; compile the reference,
// F and the placed program; then, per input set and view mode, run them and compare each with
// S_par. Each phase notes what it finds in the report.

// What every phase of one check reads.
struct CheckInput {
  const Program& program;
  const CheckOptions& options;
  const SchemaTable& schemas;
};

// The buffers a check's runs fill; a Checker keeps them for its next checks, so that a warm
// check allocates none.
struct RunBuffers {
  detail::RunScratch scratch;
  detail::Observations ref[3], value[1], actual[1];  // ref: S_par, S_seq, placed (see runPrograms)
};

// --- place

// The placed program to run against the reference, if any. Filled in place by placeProgram
// (`program` may point into `placed`).
struct Placed {
  PlacedProgram placed;
  const Program* program = nullptr;  // null: none to run (report.placementFailure says why)
  bool isReference = false;          // it is the checked program itself (see placeProgram)
};

// Places the program with options.placement. A failed placement, or a placed program that is
// invalid, is noted in report.placementFailure and leaves no placed program.
void placeProgram(const CheckInput& in, CheckReport& report, Placed& out) {
  // Where the placement leaves the program as it is, it says so (keptInput) rather than
  // copying it, and the program is the placed program. The copies' explanations are not read.
  PlaceOptions placing;
  placing.keepInput = true;
  placing.explain = false;
  // A placement that throws (a broken invariant inside it) has failed on this program: that is a
  // finding against the placement under test, to be recorded and shrunk, not an error of the check.
  try {
    out.placed = in.options.placeWith ? in.options.placeWith(in.program, in.schemas)
                                      : place(in.program, in.options.placement, in.schemas, placing);
  } catch (const std::exception& e) {
    report.placementFailure = std::string("the placement threw: ") + e.what();
    out.program = nullptr;
    return;
  }
  const PlacedProgram& placed = out.placed;
  if (placed.failure) report.placementFailure = placed.failure;
  out.program = placed.failure ? nullptr : placed.keptInput ? &in.program : &placed.program;
  // A placement that leaves the program as it is (no write-back to place: about a third of
  // generated programs) gives a placed program whose validation, analysis, compiles and runs
  // would repeat the program's own: it is valid (the program is), and its executables behave
  // as the program's do under the Placed ending (a placed-program compile differs only in
  // leaving out the end writes, which the Placed ending does not apply, and the end writes
  // only add compile errors, which the reference compile reports first). So its placed run is
  // the reference run's third ending.
  out.isReference = out.program && (placed.keptInput || *out.program == in.program);
  if (out.program && !out.isReference)
    if (std::vector<Diagnostic> errors = validate(*out.program); !errors.empty()) {
      report.placementFailure = "the placed program is invalid: " + formatAll(errors);
      out.program = nullptr;
    }
}

// --- compile

// Both programs analysed (a check's compiles of every behaviour draw share them).
struct Analysed {
  detail::Analysis program;
  std::optional<detail::Analysis> placed;
  const detail::Analysis* placedPtr() const { return placed ? &*placed : nullptr; }
  // The program calls an op without a schema: behaviour draws other than 0 differ from it.
  bool drawsDiffer = false;
};

Analysed analysePrograms(const CheckInput& in, const Placed& placed, const std::shared_ptr<detail::OpCache>& ops) {
  // Both programs call the same ops, and so do the checks before: one classification and
  // default parse per op (revalidated once per check, the table may differ).
  ops->newUse();
  Analysed out{detail::analyse(in.program, in.schemas, ops), std::nullopt, false};
  // The placed program begins as the program does, up to its first copy: those nodes' facts
  // are the program's.
  if (placed.program && !placed.isReference) out.placed = detail::analyse(*placed.program, in.schemas, ops, &out.program);
  for (std::size_t i = 0; i < out.program.nodes.size(); ++i) {
    const NodeOp op = in.program.graph.nodes[i].op;
    const detail::OpInfo& info = out.program.nodes[i].info;
    if ((op == NodeOp::CallFunction || op == NodeOp::CallModule) && !info.schema && !info.getitem) out.drawsDiffer = true;
  }
  return out;
}

// Compiles every executable of behaviour draw 0 (F only with options.programFindings) in the
// element tier, else in the storage tier (report.tier, report.tierReason). False, with the
// verdict Error, when neither tier can.
bool compilePrograms(const CheckInput& in, const Placed& placed, const Analysed& analysed, CheckReport& report,
                     Executables& exes) {
  report.tier = Tier::Element;
  const bool value = in.options.programFindings;
  if (std::optional<std::string> why = compileAll(analysed.program, analysed.placedPtr(), placed.isReference, value,
                                                  Tier::Element, 0, exes)) {
    report.tier = Tier::Storage;
    report.tierReason = *why;
    if (std::optional<std::string> error = compileAll(analysed.program, analysed.placedPtr(), placed.isReference,
                                                      value, Tier::Storage, 0, exes)) {
      report.verdict = Verdict::Error;
      report.error = *error;
      return false;
    }
  }
  return true;
}

// --- run

// One input set's runs in one view mode, as the compare phase reads them (the observations
// are in the check's RunBuffers).
struct Runs {
  detail::ObservedRun par, seq, value;
  std::optional<detail::ObservedRun> placed;  // when the placed program is compared
};

// Runs the reference executable of view mode m (S_par and S_seq, and the Placed ending when
// the placed program is the program), with `valueToo` F in the first mode only (F reads no
// view mode: its run serves both), and, with `placedToo`, the placed program.
Runs runPrograms(const Executables& exes, int m, InputSet inputs, bool valueToo, bool placedToo, RunBuffers& buffers) {
  const Semantics refEndings[] = {Semantics::Par, Semantics::Seq, Semantics::Placed};
  const std::span<const Semantics> refRun(refEndings, exes.placedIsReference ? 3 : 2);
  const Semantics valueEnding[] = {Semantics::Value}, placedEnding[] = {Semantics::Placed};
  detail::observe(exes.reference[m], refRun, inputs, buffers.scratch, buffers.ref);
  if (m == 0 && valueToo) detail::observe(exes.value, valueEnding, inputs, buffers.scratch, buffers.value);
  Runs runs{{buffers.ref[0], exes.reference[m]}, {buffers.ref[1], exes.reference[m]}, {buffers.value[0], exes.value},
            std::nullopt};
  if (placedToo) {
    if (!exes.placedIsReference) detail::observe(exes.placed[m], placedEnding, inputs, buffers.scratch, buffers.actual);
    runs.placed.emplace(detail::ObservedRun{exes.placedIsReference ? buffers.ref[2] : buffers.actual[0], exes.placed[m]});
  }
  return runs;
}

// --- compare

// The mismatches noted so far, per view mode: the first of each kind is reported, no more.
struct Noted {
  bool bug[2] = {false, false};
  bool seq[2] = {false, false};
  bool value[2] = {false, false};
};

// Compares the runs of one input set in view mode m with S_par and notes each first difference
// of a kind not noted yet: the placed program's (a placement bug, with the first node whose
// result differs), then, with options.programFindings, S_seq's and F's (findings about the
// program).
void compareRuns(const CheckInput& in, const Placed& placed, const Runs& runs, int m, unsigned behaviour,
                 InputSet inputs, Noted& noted, CheckReport& report) {
  auto note = [&](std::vector<Mismatch>& into, MismatchKind kind, const Difference& d) {
    Mismatch mm;
    mm.kind = kind;
    mm.viewMode = kModes[m];
    mm.inputSet = inputs.index;
    mm.behaviour = behaviour;
    mm.difference = d;
    mm.replay = replayLine(in.options);
    into.push_back(std::move(mm));
  };
  if (runs.placed)
    if (std::optional<Difference> d = detail::firstDifferenceOf(runs.par, *runs.placed)) {
      noted.bug[m] = true;
      note(report.bugs, MismatchKind::PlacementDiffersFromPar, *d);
      report.bugs.back().firstDivergingNode =
          tracedFirstDivergingNode(in.program, *placed.program, in.schemas, report.tier, kModes[m], behaviour, inputs);
    }
  if (!in.options.programFindings || behaviour != 0) return;
  if (!noted.seq[m])
    if (std::optional<Difference> d = detail::firstDifferenceOf(runs.par, runs.seq)) {
      noted.seq[m] = true;
      note(report.findings, MismatchKind::SeqDiffersFromPar, *d);
    }
  if (!noted.value[m])
    if (std::optional<Difference> d = detail::firstDifferenceOf(runs.par, runs.value)) {
      noted.value[m] = true;
      note(report.findings, MismatchKind::ParDiffersFromValue, *d);
    }
}

// The alias-views verdicts of a program without `*_copy` views in behaviour draw `behaviour`:
// exactly the copy-views ones.
void copyToAliasViews(CheckReport& report, unsigned behaviour) {
  for (std::vector<Mismatch>* list : {&report.bugs, &report.findings}) {
    std::vector<Mismatch> alias;
    for (const Mismatch& mm : *list)
      if (comparesRuns(mm.kind) && mm.behaviour == behaviour && mm.viewMode == ViewMode::CopyViews) alias.push_back(mm);
    for (Mismatch& mm : alias) mm.viewMode = ViewMode::AliasViews;
    list->insert(list->end(), alias.begin(), alias.end());
  }
}

}  // namespace

struct Checker::Reused {
  std::shared_ptr<detail::OpCache> ops = std::make_shared<detail::OpCache>();
  RunBuffers buffers;
};

Checker::Checker() : reused_(std::make_unique<Reused>()) {}
Checker::~Checker() = default;
Checker::Checker(Checker&&) noexcept = default;
Checker& Checker::operator=(Checker&&) noexcept = default;

CheckReport check(const Program& program, const CheckOptions& options, const SchemaTable& schemas) {
  return Checker().check(program, options, schemas);
}

CheckReport Checker::check(const Program& program, const CheckOptions& options, const SchemaTable& schemas) {
  const CheckInput in{program, options, schemas};
  CheckReport report;
  report.placement = options.placement;
  report.placedBy = options.placedBy;
  report.seed = options.seed;
  report.inputs = options.inputs;
  report.behaviours = options.behaviours;
  report.strict = options.strict;
  if (std::vector<Diagnostic> errors = validate(program); !errors.empty()) {
    report.verdict = Verdict::Error;
    report.error = formatAll(errors);
    return report;
  }
  // An annotation ExecuTorch cannot produce: a finding about the program, and no placement is
  // judged against it (DESIGN §7).
  for (AnnotationOutsideDomain& outside : annotationsOutsideReinplaceDomain(program)) {
    Mismatch finding;
    finding.kind = MismatchKind::AnnotationOutsideDomain;
    finding.difference.label = "%" + program.graph.nodes[outside.node].name;
    finding.note = std::move(outside.reason);
    finding.replay = replayLine(options);
    report.findings.push_back(std::move(finding));
  }
  const bool judgePlacement = report.findings.empty();
  Placed placed;
  placeProgram(in, report, placed);
  if (!judgePlacement) {
    placed.program = nullptr;
    placed.isReference = false;
  }
  const Analysed analysed = analysePrograms(in, placed, reused_->ops);
  Executables exes;
  if (!compilePrograms(in, placed, analysed, report, exes)) return report;
  Noted noted;
  // Draw 0 first (every kind of mismatch), then the other behaviour draws of the ops without a
  // schema (the placed program against S_par only), while some view mode has no bug yet.
  const int draws = analysed.drawsDiffer ? std::max(options.behaviours, 1) : 1;
  for (int draw = 0; draw < draws; ++draw) {
    if (draw > 0) {
      if (!placed.program || (noted.bug[0] && noted.bug[1])) break;
      // A draw that does not compile in the check's tier (a view of an argument reaching
      // outside its storage, the memory cap) is skipped: draw 0 compiled.
      exes = Executables{};
      if (compileAll(analysed.program, analysed.placedPtr(), placed.isReference, false, report.tier,
                     static_cast<unsigned>(draw), exes))
        continue;
    }
    // The runs of the executables forked from the copy-views one (F, alias views, placed) start
    // from its run's state at their forks (detail::ForkState), so it runs first; fork states of
    // earlier compiles are let go (their programs are not these).
    reused_->buffers.scratch.releaseForkStates();
    const bool programFindings = options.programFindings && draw == 0;
    for (int set = 0; set < options.inputs; ++set) {
      const InputSet inputs{options.seed, set};
      for (int m = 0; m < 2; ++m) {
        if (m == 1 && exes.sameInBothModes) break;  // identical runs: copied below
        if (draw > 0 && noted.bug[m]) continue;
        const Runs runs =
            runPrograms(exes, m, inputs, programFindings, placed.program && !noted.bug[m], reused_->buffers);
        compareRuns(in, placed, runs, m, static_cast<unsigned>(draw), inputs, noted, report);
      }
    }
    if (exes.sameInBothModes) {
      copyToAliasViews(report, static_cast<unsigned>(draw));
      if (noted.bug[0]) noted.bug[1] = true;
    }
  }
  report.verdict = report.bugs.empty() && !report.placementFailure ? Verdict::Holds : Verdict::PlacementBug;
  return report;
}

std::string formatReport(const CheckReport& report) {
  std::ostringstream s;
  auto hex = [](std::optional<std::uint64_t> v) {
    if (!v) return std::string("(missing)");
    std::ostringstream h;
    h << "0x" << std::hex << *v;
    return h.str();
  };
  auto describe = [&](const Mismatch& m) {
    const Difference& d = m.difference;
    if (!comparesRuns(m.kind)) {
      s << "  " << toString(m.kind) << ": " << d.label << ": " << m.note << "\n";
      return;
    }
    s << "  " << toString(m.kind) << " [" << toString(m.viewMode) << ", input set " << m.inputSet;
    if (m.behaviour != 0) s << ", behaviour draw " << m.behaviour;
    s << "]: "
      << (d.isOutput ? "" : "placeholder ") << d.label;
    if (report.tier == Tier::Element) s << " element " << d.element;
    s << ": expected " << hex(d.expected) << ", got " << hex(d.actual) << "\n";
    if (!m.firstDivergingNode.empty()) s << "    first diverging node: %" << m.firstDivergingNode << "\n";
    if (!m.replay.empty()) s << "    replay: " << m.replay << "\n";
  };
  if (report.verdict == Verdict::Error) {
    s << "error: " << report.error << "\n";
    return s.str();
  }
  if (report.placedBy.empty())
    s << "placement " << toString(report.placement);
  else
    s << "placed by " << report.placedBy;
  s << ", " << toString(report.tier) << " tier";
  if (!report.tierReason.empty()) s << " (" << report.tierReason << ")";
  s << ", seed " << report.seed << ", " << report.inputs << " input set(s), both view modes\n";
  if (report.placementFailure) s << "BUG: the placement failed: " << *report.placementFailure << "\n";
  bool judged = true;
  for (const Mismatch& m : report.findings) judged = judged && comparesRuns(m.kind);
  if (!judged && report.bugs.empty() && !report.placementFailure)
    s << "placement not judged: ExecuTorch makes no program with an annotation outside reinplace's domain\n";
  else if (report.bugs.empty() && !report.placementFailure)
    s << "placement == S_par: holds\n";
  for (const Mismatch& m : report.bugs) {
    s << "BUG (placement):\n";
    describe(m);
  }
  for (const Mismatch& m : report.findings) {
    s << "finding (program):\n";
    describe(m);
  }
  if (report.findings.empty()) s << "S_seq == S_par == F: no findings\n";
  return s.str();
}

}  // namespace wb::oracle
