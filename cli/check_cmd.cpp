// cli/check_cmd.cpp: `wbcheck check FILE [--placement P | --pass-cmd CMD [--pass-timeout-ms T] [--pass-form N]]
// [--inputs N] [--behaviours N] [--seed S] [--strict] [--validate] [--json]`: oracle verdicts of a placement (one of
// wbcheck's, or an external pass's output: passcmd/external_pass.h) against the reference semantics, and with
// --validate the translation validation of the placed program (proofs/equivalence.h) for all inputs.
#include <iostream>
#include <memory>

#include "campaign/campaign.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/equivalence_json.h"
#include "cli/ordering_json.h"
#include "oracle/oracle.h"
#include "passcmd/external_pass.h"
#include "passcmd/pass_runner.h"
#include "proofs/equivalence.h"
#include "proofs/ordering.h"

namespace wb::cli {

namespace {

struct CheckCmdOptions {
  std::string file;
  InputOptions input;
  std::string placement = "early";
  int inputs = 3;
  int behaviours = oracle::kDefaultBehaviours;
  std::uint64_t seed = 0;
  bool strict = false;
  bool json = false;
  bool validate = false;  // also prove the placed program equivalent to the program (Z3)
  proofs::SmtOptions smt;  // the limits of --validate's queries
  PassCmdOptions passCmd;  // the pass under test as a command (docs/pass-protocol.md)
};

// A finding that compares no runs (an annotation outside reinplace's domain) has no view mode
// and no input set (null): its observation is the annotated node, its note says why.
nlohmann::json mismatchJson(const oracle::Mismatch& m) {
  const bool runs = oracle::comparesRuns(m.kind);
  nlohmann::json j = {{"kind", std::string(oracle::toString(m.kind))},
                      {"view_mode", runs ? nlohmann::json(std::string(oracle::toString(m.viewMode))) : nlohmann::json(nullptr)},
                      {"input_set", runs ? nlohmann::json(m.inputSet) : nlohmann::json(nullptr)},
                      {"behaviour", m.behaviour},
                      {"observation", m.difference.label},
                      {"element", m.difference.element},
                      {"first_diverging_node", m.firstDivergingNode},
                      {"note", m.note},
                      {"replay", m.replay}};
  j["expected"] = m.difference.expected ? nlohmann::json(*m.difference.expected) : nlohmann::json(nullptr);
  j["actual"] = m.difference.actual ? nlohmann::json(*m.difference.actual) : nlohmann::json(nullptr);
  return j;
}

// What the ordering proof says about a placement bug, in words.
std::string brokenConstraintsText(const proofs::OrderingReport& ordering) {
  std::string s;
  for (const proofs::StructuralFault& f : ordering.faults)
    s += "why (" + std::string(proofs::toString(f.kind)) + "): " + f.text + "\n";
  for (const proofs::Violation& v : ordering.violations)
    if (v.live) s += "why (broken ordering constraint): " + v.text + "\n";
  if (s.empty()) {
    if (ordering.verdict == proofs::Verdict::Unknown)
      s = "why: unknown (the ordering proof: " + ordering.reason + ")\n";
    else
      s = "why: the ordering proof finds no broken constraint and no structural fault\n";
  }
  return s;
}

int runCheck(const CheckCmdOptions& options, const std::vector<std::string>& argv) {
  std::optional<Placement> placement = placementFromString(options.placement);
  if (!placement) {
    std::cerr << "wbcheck check: unknown placement '" << options.placement << "'\n";
    return kInputError;
  }
  if (options.inputs < 1 || options.inputs > 1000) {
    std::cerr << "wbcheck check: --inputs must be between 1 and 1000\n";
    return kInputError;
  }
  std::optional<LoadedProgram> loaded = loadProgram(options.file, options.input);
  if (!loaded) return kInputError;
  std::optional<passcmd::PassRunner> runner;
  if (!options.passCmd.command.empty()) {
    if (const std::string why = programFormCannotCarry(loaded->program, options.passCmd.pass().form); !why.empty()) {
      std::cerr << "wbcheck check: --pass-form " << options.passCmd.form << ": " << why << "\n";
      return kInputError;
    }
    runner.emplace(options.passCmd.pass());
  }
  oracle::CheckOptions checkOptions;
  checkOptions.placement = *placement;
  checkOptions.inputs = options.inputs;
  checkOptions.behaviours = options.behaviours;
  checkOptions.seed = options.seed;
  checkOptions.strict = options.strict;
  checkOptions.fileName = options.file;
  // The external pass runs once; its placed program is kept for the ordering proof.
  oracle::Checker checker;
  const campaign::PassCheck checked =
      campaign::checkPass(checker, loaded->program, checkOptions, runner ? &*runner : nullptr, loaded->schemas);
  const oracle::CheckReport& report = checked.report;
  const passcmd::ExternalPlacement* external = checked.externalOrNull();
  // A placement bug: the ordering proof names the constraint the placement broke (or the
  // structural fault: a missing write-back, a dropped node, a changed output layout). The
  // oracle knows nothing of the proofs; the two meet here.
  std::optional<proofs::OrderingReport> ordering;
  if (report.verdict == oracle::Verdict::PlacementBug) {
    proofs::OrderingOptions proving;
    proving.minimality = false;
    if (!external)
      ordering = proofs::proveOrdering(loaded->program, *placement, loaded->schemas, proving);
    else if (!external->placed.failure)
      ordering = proofs::proveOrdering(loaded->program, external->placed, loaded->schemas, false, proving);
  }

  // Translation validation: the oracle runs a few input sets, the proof covers all of them.
  // An external pass that placed nothing (crash, hang, malformed output) is already a bug.
  std::optional<proofs::PlacedEquivalence> validation;
  if (options.validate && (!external || external->outcome == passcmd::PassOutcome::Placed)) {
    proofs::EquivalenceOptions e;
    e.smt = options.smt;
    e.dumpName = "check-validate";
    validation = proofs::provePlacedEquivalent(
        loaded->program, external ? external->placed : place(loaded->program, *placement, loaded->schemas), e);
  }
  // The oracle's verdict first; a refutation of the proof is a bug too, and an unknown proof
  // turns a pass into unknown (exit 3), never into a pass.
  int exit = report.exitCode();
  if (validation && exit == 0) exit = proofs::exitCode(validation->verdict);

  if (options.json) {
    nlohmann::json out = provenance(argv);
    const bool byCommand = !options.passCmd.command.empty();
    out["placement"] = byCommand ? nlohmann::json(nullptr) : nlohmann::json(toString(*placement));
    out["pass_cmd"] = byCommand ? nlohmann::json(options.passCmd.command) : nlohmann::json(nullptr);
    out["pass_outcome"] =
        external ? nlohmann::json(std::string(passcmd::toString(external->outcome))) : nlohmann::json(nullptr);
    out["seed"] = options.seed;
    out["inputs"] = options.inputs;
    out["behaviours"] = options.behaviours;
    out["tier"] = std::string(oracle::toString(report.tier));
    out["tier_reason"] = report.tierReason;
    out["verdict"] = report.verdict == oracle::Verdict::Holds          ? "holds"
                     : report.verdict == oracle::Verdict::PlacementBug ? "placement-bug"
                                                                       : "error";
    out["error"] = report.error;
    out["placement_failure"] =
        report.placementFailure ? nlohmann::json(*report.placementFailure) : nlohmann::json(nullptr);
    out["bugs"] = nlohmann::json::array();
    for (const auto& m : report.bugs) {
      nlohmann::json bug = mismatchJson(m);
      bug["broken_constraints"] = ordering ? brokenConstraints(*ordering, m.viewMode) : std::vector<std::string>{};
      out["bugs"].push_back(std::move(bug));
    }
    out["ordering"] = ordering ? orderingJson(loaded->program, *ordering) : nlohmann::json(nullptr);
    out["findings"] = nlohmann::json::array();
    for (const auto& m : report.findings) out["findings"].push_back(mismatchJson(m));
    if (validation) {
      nlohmann::json v = validation->report ? equivalenceJson(*validation->report, *validation->pair) : nlohmann::json::object();
      v["proof_verdict"] = std::string(proofs::toString(validation->verdict));
      if (!validation->reason.empty()) v["reason"] = validation->reason;
      out["validation"] = std::move(v);
    } else {
      out["validation"] = nullptr;
    }
    out["exit_code"] = exit;
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << oracle::formatReport(report);
    if (ordering) std::cout << brokenConstraintsText(*ordering);
    if (validation)
      std::cout << "\ntranslation validation (Z3, every input): " << proofs::toString(validation->verdict) << "\n"
                << proofs::formatPlacedEquivalence(*validation);
  }
  return exit;
}

}  // namespace

void registerCheck(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<CheckCmdOptions>();
  CLI::App* sub = app.add_subcommand("check", "Run a placement against the reference semantics (S_par) in both view modes");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  addInputOptions(*sub, options->input);
  CLI::Option* placementOption =
      sub->add_option("--placement", options->placement, placementNames(" | ") + " (pr20744: the latest version)")
          ->capture_default_str();
  addPassCmdOptions(*sub, options->passCmd, placementOption, true);
  sub->add_option("--inputs", options->inputs, "input sets per check")->capture_default_str();
  addBehavioursOption(*sub, options->behaviours);
  sub->add_option("--seed", options->seed, "seed of the inputs")->capture_default_str();
  sub->add_flag("--strict", options->strict, "findings about the program (S_seq != S_par, S_par != F, an annotation outside reinplace's domain) fail too");
  sub->add_flag("--validate", options->validate,
                "also prove the placed program equivalent to the program under S_par for every input (Z3, as `wbcheck "
                "validate` does): refuted is exit 1, unknown exit 3");
  addSmtOptions(*sub, options->smt, false, "with --validate: ");
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->callback([&action, options, argv] { action = [options, argv] { return runCheck(*options, argv); }; });
}

}  // namespace wb::cli
