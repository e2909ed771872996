// cli/validate_cmd.cpp: `wbcheck validate BEFORE AFTER [--timeout-ms T] [--rlimit R] [--memory-mb M] [--json] [--smt-dump DIR]`:
// translation validation of a pass's output (proofs/equivalence.h).
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/equivalence_json.h"
#include "proofs/equivalence.h"

namespace wb::cli {

namespace {

struct ValidateCmdOptions {
  std::string before, after;
  proofs::SmtOptions smt;
  bool json = false;
};

int runValidate(const ValidateCmdOptions& options, const std::vector<std::string>& argv) {
  std::optional<LoadedProgram> before = loadProgram(options.before);
  if (!before) return kInputError;
  std::optional<LoadedProgram> after = loadProgram(options.after);
  if (!after) return kInputError;
  Result<proofs::PreparedPair> pair = proofs::prepare(before->program, after->program, options.before, options.after);
  if (!pair) {
    if (options.json) {
      nlohmann::json out = provenance(argv);
      out["verdict"] = "error";
      out["error"] = formatAll(pair.errors);
      out["exit_code"] = static_cast<int>(kInputError);
      std::cout << out.dump(2) << "\n";
    } else {
      std::cerr << formatAll(pair.errors);
    }
    return kInputError;
  }
  proofs::EquivalenceOptions eq;
  eq.smt = options.smt;
  eq.dumpName = "validate";
  const proofs::EquivalenceReport report = proofs::checkEquivalence(*pair, eq);
  if (options.json) {
    nlohmann::json out = provenance(argv);
    out.update(equivalenceJson(report, *pair));
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << proofs::formatReport(report, *pair);
  }
  return report.exitCode();
}

}  // namespace

void registerValidate(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<ValidateCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Prove a pass's output (AFTER, with copy_ nodes) equivalent to its input (BEFORE) under S_par, or refute it");
  sub->add_option("BEFORE", options->before, "the program with mutation outputs, or - for standard input")->required();
  sub->add_option("AFTER", options->after, "what the pass printed: the program with its copy_ nodes")->required();
  addSmtOptions(*sub, options->smt, true);
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->callback([&action, options, argv] { action = [options, argv] { return runValidate(*options, argv); }; });
}

}  // namespace wb::cli
