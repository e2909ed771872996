// cli/prove_cmd.cpp: `wbcheck prove FILE [--placement P | --pass-cmd CMD [--pass-timeout-ms T] [--pass-form N]]
// [--only ordering|equivalence] [--timeout-ms T] [--rlimit N] [--memory-mb M] [--json] [--smt-dump DIR]`: Z3 proofs
// of a placement, one of wbcheck's or an external pass's output (DESIGN §11, §12): the ordering
// proof (proofs/ordering.h) and the equivalence of the placed program to the program under S_par
// (proofs/equivalence.h, the proof `wbcheck validate` makes). The JSON report
// keeps each proof in its own object ("ordering", "equivalence"); the verdict is refuted if
// either refutes, else unknown if either is unknown, else proved.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/equivalence_json.h"
#include "cli/ordering_json.h"
#include "core/reinplace_domain.h"
#include "passcmd/pass_runner.h"
#include "proofs/equivalence.h"
#include "proofs/ordering.h"

namespace wb::cli {

namespace {

struct ProveCmdOptions {
  std::string file;
  std::string placement = "early";
  proofs::SmtOptions smt;
  std::string only;  // "", "ordering" or "equivalence"
  bool json = false;
  PassCmdOptions passCmd;  // the pass under test as a command (docs/pass-protocol.md)
};

proofs::Verdict combined(const std::vector<proofs::Verdict>& verdicts) {
  proofs::Verdict v = proofs::Verdict::Proved;
  for (proofs::Verdict x : verdicts) {
    if (x == proofs::Verdict::Refuted) return x;
    if (x == proofs::Verdict::Unknown) v = x;
  }
  return v;
}

int runProve(const ProveCmdOptions& options, const std::vector<std::string>& argv) {
  std::optional<Placement> placement = placementFromString(options.placement);
  if (!placement) {
    std::cerr << "wbcheck prove: unknown placement '" << options.placement << "'\n";
    return kInputError;
  }
  std::optional<LoadedProgram> loaded = loadProgram(options.file);
  if (!loaded) return kInputError;
  if (!options.only.empty() && options.only != "ordering" && options.only != "equivalence") {
    std::cerr << "wbcheck prove: --only takes ordering or equivalence, not '" << options.only << "'\n";
    return kInputError;
  }
  // ExecuTorch makes no program with an annotation outside reinplace's domain (DESIGN §7): the
  // oracle judges no placement on one (`wbcheck check` reports it as a finding about the
  // program), and the ordering proof would refute early on it. Nothing judged is an input
  // error, never a proof.
  if (const std::vector<AnnotationOutsideDomain> outside = annotationsOutsideReinplaceDomain(loaded->program);
      !outside.empty()) {
    std::string why = "not judged: ExecuTorch makes no program with an annotation outside reinplace's domain "
                      "(`wbcheck check` reports it as a finding about the program):";
    for (const AnnotationOutsideDomain& a : outside)
      why += "\n  %" + loaded->program.graph.nodes[a.node].name + ": " + a.reason;
    if (options.json) {
      nlohmann::json out = provenance(argv);
      out["file"] = options.file;
      out["verdict"] = "error";
      out["error"] = why;
      out["exit_code"] = static_cast<int>(kInputError);
      std::cout << out.dump(2) << "\n";
    } else {
      std::cerr << "wbcheck prove: " << loaded->path << ": " << why << "\n";
    }
    return kInputError;
  }
  const proofs::SmtOptions& smt = options.smt;
  // What is proved: the built-in placement's output, or the command's (run once). A command
  // that crashes, hangs or prints what does not read has placed nothing: that is the verdict.
  const bool byCommand = !options.passCmd.command.empty();
  const std::string placedBy = byCommand ? passcmd::commandLineWords(options.passCmd.pass()) : options.placement;
  std::optional<passcmd::ExternalPlacement> external;
  if (byCommand) {
    if (const std::string why = programFormCannotCarry(loaded->program, options.passCmd.pass().form); !why.empty()) {
      std::cerr << "wbcheck prove: --pass-form " << options.passCmd.form << ": " << why << "\n";
      return kInputError;
    }
    external = passcmd::PassRunner(options.passCmd.pass()).place(loaded->program);
    if (external->outcome != passcmd::PassOutcome::Placed) {
      const std::string why = external->placed.failure.value_or(std::string(passcmd::toString(external->outcome)));
      if (options.json) {
        nlohmann::json out = provenance(argv);
        out["file"] = options.file;
        out["pass_cmd"] = options.passCmd.command;
        out["pass_outcome"] = std::string(passcmd::toString(external->outcome));
        out["verdict"] = std::string(proofs::toString(proofs::Verdict::Refuted));
        out["reason"] = why;
        out["exit_code"] = proofs::exitCode(proofs::Verdict::Refuted);
        std::cout << out.dump(2) << "\n";
      } else {
        std::cout << "prove: " << placedBy << ": " << passcmd::toString(external->outcome) << ": " << why
                  << "\nprove: refuted (nothing was placed to prove)\n";
      }
      return proofs::exitCode(proofs::Verdict::Refuted);
    }
  }
  std::optional<proofs::OrderingReport> ordering;
  std::optional<proofs::PlacedEquivalence> equivalence;
  std::vector<proofs::Verdict> verdicts;
  if (options.only != "equivalence") {
    proofs::OrderingOptions o;
    o.smt = smt;
    // An external pass need not be minimal: being later than early is reported, not refuted.
    ordering = external ? proofs::proveOrdering(loaded->program, external->placed, loaded->schemas, false, o)
                        : proofs::proveOrdering(loaded->program, *placement, loaded->schemas, o);
    verdicts.push_back(ordering->verdict);
  }
  if (options.only != "ordering") {
    proofs::EquivalenceOptions e;
    e.smt = smt;
    e.dumpName = "equivalence";
    equivalence = proofs::provePlacedEquivalent(
        loaded->program, external ? external->placed : place(loaded->program, *placement, loaded->schemas), e);
    verdicts.push_back(equivalence->verdict);
  }
  const proofs::Verdict verdict = combined(verdicts);
  const int exit = proofs::exitCode(verdict);
  if (options.json) {
    nlohmann::json out = provenance(argv);
    out["file"] = options.file;
    out["placement"] = byCommand ? nlohmann::json(nullptr) : nlohmann::json(options.placement);
    out["pass_cmd"] = byCommand ? nlohmann::json(options.passCmd.command) : nlohmann::json(nullptr);
    out["verdict"] = std::string(proofs::toString(verdict));
    out["exit_code"] = exit;
    if (ordering) out["ordering"] = orderingJson(loaded->program, *ordering);
    if (equivalence) {
      nlohmann::json e = equivalence->report ? equivalenceJson(*equivalence->report, *equivalence->pair) : nlohmann::json::object();
      e["proof_verdict"] = std::string(proofs::toString(equivalence->verdict));
      if (!equivalence->reason.empty()) e["reason"] = equivalence->reason;
      out["equivalence"] = std::move(e);
    }
    std::cout << out.dump(2) << "\n";
  } else {
    if (ordering) std::cout << proofs::formatOrderingReport(*ordering, placedBy);
    if (equivalence) {
      if (ordering) std::cout << "\n";
      std::cout << "equivalence proof of " << (byCommand ? "" : "placement ") << placedBy
                << " (the placed program against S_par):\n"
                << proofs::formatPlacedEquivalence(*equivalence);
    }
    if (ordering && equivalence)
      std::cout << "\nprove: " << proofs::toString(verdict) << " (ordering " << proofs::toString(ordering->verdict)
                << ", equivalence " << proofs::toString(equivalence->verdict) << ")\n";
  }
  return exit;
}

}  // namespace

void registerProve(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<ProveCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "prove",
      "Prove with Z3 that a placement orders its copies as the storage semantics requires (both view modes), and\n"
      "that early places each as early as possible; name the violated constraints otherwise. Prove the placed program\n"
      "equivalent to the program under S_par (as `validate` does), or refute it with a counterexample.\n"
      "With --pass-cmd, the placed program is the command's output (docs/pass-protocol.md); it need not be minimal.\n"
      "A program with an annotation outside reinplace's domain is not judged (exit 2), as `wbcheck check` judges none.\n"
      "Exit codes: 0 proved, 1 refuted (or early not minimal), 2 usage or input error, 3 unknown (solver limit).");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  CLI::Option* placementOption =
      sub->add_option("--placement", options->placement, placementNames(" | ") + " (pr20744: the latest version)")
          ->capture_default_str();
  addPassCmdOptions(*sub, options->passCmd, placementOption, false);
  sub->add_option("--only", options->only, "ordering | equivalence: one of the two proofs (default: both)");
  addSmtOptions(*sub, options->smt, true);
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->callback([&action, options, argv] { action = [options, argv] { return runProve(*options, argv); }; });
}

}  // namespace wb::cli
