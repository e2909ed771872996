// cli/shrink_cmd.cpp: `wbcheck shrink FILE [--placement P] [--seed S] [--inputs N] [--out FILE] [--no-draw]`:
// reduces a failing program while keeping its verdict (same placement, same kind of
// divergence, same view modes, same target; `early` still holds) and writes it in form 1 with
// the header of a campaign artifact, with its picture beside --out (`--no-draw`: none). The work
// is campaign/'s shrinkFinding.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/picture.h"
#include "draw/render.h"
#include "campaign/campaign.h"

namespace wb::cli {

namespace {

struct ShrinkCmdOptions {
  std::string file;
  InputOptions input;
  std::string placement;  // empty: the file header's, else early
  std::optional<std::uint64_t> seed;  // empty: the file header's, else 0
  int inputs = 3;
  std::string out;        // empty: standard output
  bool noDraw = false;    // no picture beside --out
};

int runShrink(const ShrinkCmdOptions& options, const std::vector<std::string>& argv) {
  const char* me = "wbcheck shrink";
  std::optional<InputText> text = readInput(options.file, options.input);
  if (!text) return kInputError;
  const campaign::ArtifactHeader header = campaign::parseArtifactHeader(text->text());
  const std::string placementName =
      !options.placement.empty() ? options.placement : !header.placement.empty() ? header.placement : "early";
  std::optional<Placement> placement = placementFromString(placementName);
  if (!placement) {
    std::cerr << me << ": unknown placement '" << placementName << "'\n";
    return kInputError;
  }
  if (options.inputs < 1 || options.inputs > 1000) {
    std::cerr << me << ": --inputs must be between 1 and 1000\n";
    return kInputError;
  }
  if (!options.noDraw && !options.out.empty() && !draw::findOnPath("dot")) {
    std::cerr << me << ": " << draw::kDotMissing << " (or pass --no-draw: no picture beside --out)\n";
    return kInputError;
  }
  const std::uint64_t seed = options.seed ? *options.seed : header.seed.value_or(0);
  std::optional<LoadedProgram> loaded = loadProgram(options.file, text->text(), options.input);
  text.reset();
  if (!loaded) return kInputError;

  oracle::CheckOptions check;
  check.placement = *placement;
  check.inputs = options.inputs;
  check.seed = seed;
  const oracle::CheckReport report = oracle::check(loaded->program, check, loaded->schemas);
  if (report.verdict == oracle::Verdict::Error) {
    std::cerr << me << ": " << report.error << "\n";
    return kInputError;
  }
  std::optional<campaign::FindingKey> key = campaign::classifyFinding(loaded->program, report, loaded->schemas);
  if (!key) {
    std::cerr << me << ": " << options.file << " does not fail with placement " << placementName << " (seed " << seed
              << "): nothing to keep\n";
    return kViolated;
  }
  const SchemaTable builtins = builtinSchemas();
  const campaign::ShrunkFinding shrunk = campaign::shrinkFinding(loaded->program, *key, seed, options.inputs, builtins);
  if (!shrunk.reproduced) {
    std::cerr << me << ": " << options.file << " fails with " << placementName << ", but early fails on it too: "
              << "not a counterexample to shrink (see wbcheck check " << options.file << ")\n";
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
    if (const std::optional<std::string> error = writeFindingPicture(artifact, picture, options.inputs)) {
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
      "Reduce a failing program, keeping its verdict (placement, divergence kind, view modes, target; early holds).\n"
      "Exit codes: 0 shrunk (written), 1 the file does not fail with the placement (or early fails too), "
      "2 usage or input error.");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  addInputOptions(*sub, options->input);
  sub->add_option("--placement", options->placement,
                  placementNames(" | ") + " (pr20744: the latest version; default: the file header's `# placement:`, else early)");
  sub->add_option("--seed", options->seed, "oracle input seed (default: the file header's `# seed:`, else 0)");
  sub->add_option("--inputs", options->inputs, "input sets per check")->capture_default_str();
  sub->add_option("--out", options->out, "output file (written atomically; default: standard output)");
  sub->add_flag("--no-draw", options->noDraw, "write no picture (the --out file's name with .svg, drawn by graphviz) beside --out");
  sub->callback([&action, options, argv] { action = [options, argv] { return runShrink(*options, argv); }; });
}

}  // namespace wb::cli
