// cli/shrink_cmd.cpp: `wbcheck shrink FILE [--placement P | --pass-cmd CMD [--pass-timeout-ms T] [--pass-form N]]
// [--seed S] [--inputs N] [--behaviours N] [--out FILE] [--no-draw]`: reduces a failing program while keeping its
// verdict (same placement, or the same external pass run on each candidate, same kind of
// divergence, same view modes, same target; S_par == F where the file has it, and `early` still
// holds when it is not the placement shrunk against: campaign.h, shrinkFinding) and writes it in form 1 with
// the header of a campaign artifact, with its picture beside --out (`--no-draw`: none). The work
// is campaign/'s shrinkFinding.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/finding_file.h"
#include "cli/picture.h"
#include "draw/render.h"
#include "campaign/campaign.h"

namespace wb::cli {

namespace {

struct ShrinkCmdOptions {
  FindingFileOptions finding;
  PassCmdOptions passCmd;
  std::string out;        // empty: standard output
  bool noDraw = false;    // no picture beside --out
};

int runShrink(const ShrinkCmdOptions& options, const std::vector<std::string>& argv) {
  const char* me = "wbcheck shrink";
  std::optional<FindingFile> finding = readFindingFile(options.finding, me, [&]() -> std::optional<std::string> {
    if (!options.noDraw && !options.out.empty() && !draw::findOnPath("dot"))
      return std::string(draw::kDotMissing) + " (or pass --no-draw: no picture beside --out)";
    return std::nullopt;
  });
  if (!finding) return kInputError;
  const LoadedProgram* loaded = &finding->loaded;
  const std::string& placementName = finding->placementName;
  const std::uint64_t seed = finding->seed;
  const std::string& file = options.finding.file;
  const int inputs = options.finding.inputs;

  // The pass under test: the placement, or the external command (run here once, then once per
  // candidate of the reduction).
  std::optional<passcmd::PassRunner> runner;
  oracle::CheckOptions check;
  check.placement = finding->placement;
  check.inputs = inputs;
  check.behaviours = finding->behaviours;
  check.seed = seed;
  std::string passName = "placement " + placementName;
  if (!options.passCmd.command.empty()) {
    if (const std::string why = programFormCannotCarry(loaded->program, options.passCmd.pass().form); !why.empty()) {
      std::cerr << me << ": --pass-form " << options.passCmd.form << ": " << why << "\n";
      return kInputError;
    }
    runner.emplace(options.passCmd.pass());
    passName = runner->words();
  }
  oracle::Checker checker;
  const campaign::PassCheck checked =
      campaign::checkPass(checker, loaded->program, check, runner ? &*runner : nullptr, loaded->schemas);
  if (checked.report.verdict == oracle::Verdict::Error) {
    std::cerr << me << ": " << checked.report.error << "\n";
    return kInputError;
  }
  std::optional<campaign::FindingKey> key = checked.classify(loaded->program, loaded->schemas);
  if (!key) {
    std::cerr << me << ": " << file << " does not fail with " << passName << " (seed " << seed << "): nothing to keep\n";
    return kViolated;
  }
  const SchemaTable builtins = builtinSchemas();
  const campaign::ShrunkFinding shrunk = campaign::shrinkFinding(loaded->program, *key, seed, inputs, builtins, {},
                                                                 runner ? &*runner : nullptr, finding->behaviours);
  if (!shrunk.reproduced) {
    std::cerr << me << ": " << file << " fails with " << passName << ", but early fails on it too: "
              << "not a counterexample to shrink (see wbcheck check " << file << ")\n";
    return kViolated;
  }
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  // The picture goes beside the file written; standard output has nothing beside it.
  const bool drawPicture = !options.noDraw && !options.out.empty();
  const std::string picture = drawPicture ? campaign::pictureFileName(options.out) : std::string();
  const campaign::ArtifactInfo info{WBCHECK_VERSION, seed, "", "", picture};
  std::string artifact = provenanceComment(argv) +
                         campaign::formatArtifact(shrunk, info, options.out.empty() ? "FILE" : options.out);
  std::cerr << me << ": " << campaign::describe(shrunk.key) << ": " << shrunk.bodyNodesBefore << " -> "
            << shrunk.bodyNodesAfter << " body nodes in " << shrunk.tests << " checks\n";
  if (options.out.empty()) {
    std::cout << artifact;
  } else if (!writeFileAtomically(options.out, artifact)) {
    std::cerr << me << ": cannot write " << options.out << "\n";
    return kInputError;
  } else if (drawPicture) {
    if (const std::optional<std::string> error = writeFindingPicture(artifact, picture, inputs)) {
      std::cerr << me << ": cannot draw " << picture << ": " << *error << "\n";
      return kInputError;
    }
  }
  return kHolds;
}

}  // namespace

void registerShrink(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<ShrinkCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "shrink",
      "Reduce a failing program, keeping its verdict (placement, divergence kind, view modes, target; S_par == F "
      "where the file has it; early holds unless it is the placement).\n"
      "Exit codes: 0 shrunk (written), 1 the file does not fail with the placement (or early fails too), "
      "2 usage or input error.");
  addFindingFileOptions(*sub, options->finding, "input sets per check");
  addPassCmdOptions(*sub, options->passCmd, sub->get_option("--placement"), true);
  sub->add_option("--out", options->out, "output file (written atomically; default: standard output)");
  sub->add_flag("--no-draw", options->noDraw, "write no picture (the --out file's name with .svg, drawn by graphviz) beside --out");
  sub->callback([&action, options, argv] { action = [options, argv] { return runShrink(*options, argv); }; });
}

}  // namespace wb::cli
