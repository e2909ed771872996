// cli/prove_cmd.cpp: `wbcheck prove FILE [--placement P] [--timeout-ms T] [--rlimit N] [--json]
// [--smt-dump DIR]`: Z3 proofs of a placement (DESIGN §11, §12). Today the ordering proof
// (proofs/ordering.h); the JSON report keeps each proof in its own object ("ordering"), so the
// equivalence proof can join it.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/ordering_json.h"
#include "proofs/ordering.h"

namespace wb::cli {

namespace {

struct ProveCmdOptions {
  std::string file;
  std::string placement = "early";
  std::uint32_t timeoutMs = 30'000;
  std::uint64_t rlimit = proofs::SmtOptions{}.rlimit;
  std::string smtDump;
  bool json = false;
};

int runProve(const ProveCmdOptions& options, const std::vector<std::string>& argv) {
  std::optional<Placement> placement = placementFromString(options.placement);
  if (!placement) {
    std::cerr << "wbcheck prove: unknown placement '" << options.placement << "'\n";
    return kInputError;
  }
  if (options.rlimit > 0xffffffffu) {
    std::cerr << "wbcheck prove: --rlimit must be at most 4294967295\n";
    return kInputError;
  }
  std::optional<LoadedProgram> loaded = loadProgram(options.file);
  if (!loaded) return kInputError;
  proofs::OrderingOptions ordering;
  ordering.smt.timeoutMs = options.timeoutMs;
  ordering.smt.rlimit = options.rlimit;
  ordering.smt.dumpDir = options.smtDump;
  const proofs::OrderingReport report = proofs::proveOrdering(loaded->program, *placement, loaded->schemas, ordering);
  const int exit = proofs::exitCode(report.verdict);
  if (options.json) {
    nlohmann::json out = provenance(argv);
    out["file"] = options.file;
    out["placement"] = options.placement;
    out["verdict"] = std::string(proofs::toString(report.verdict));
    out["exit_code"] = exit;
    out["ordering"] = orderingJson(loaded->program, report);
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << proofs::formatOrderingReport(report, options.placement);
  }
  return exit;
}

}  // namespace

void registerProve(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<ProveCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "prove",
      "Prove with Z3 that a placement orders its copies as the storage semantics requires (both view modes), and\n"
      "that early places each as early as possible; name the violated constraints otherwise.\n"
      "Exit codes: 0 proved, 1 refuted (or early not minimal), 2 usage or input error, 3 unknown (solver limit).");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  sub->add_option("--placement", options->placement, "early | end | upstream | pr20744 | draft13857")
      ->capture_default_str();
  sub->add_option("--timeout-ms", options->timeoutMs, "wall-clock guard per solver query, in ms (0: none)")
      ->capture_default_str();
  sub->add_option("--rlimit", options->rlimit, "Z3 resource limit per query, deterministic (0: none)")
      ->capture_default_str();
  sub->add_option("--smt-dump", options->smtDump, "write every query to DIR as an .smt2 file `z3 FILE` answers");
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->callback([&action, options, argv] { action = [options, argv] { return runProve(*options, argv); }; });
}

}  // namespace wb::cli
