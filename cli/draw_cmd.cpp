// cli/draw_cmd.cpp: `wbcheck draw FILE [--placement P] [--seed S] [--inputs N] [--svg OUT | --dot OUT]`:
// the program with one placement's write-backs as a picture, and what the oracle refutes drawn
// into it (draw/draw.h). Without --svg or --dot the DOT text goes to standard output.
#include <filesystem>
#include <iostream>

#include "campaign/campaign.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "draw/draw.h"
#include "draw/render.h"

namespace wb::cli {

namespace {

struct DrawCmdOptions {
  std::string file;
  std::string placement;              // empty: the file header's `# placement:`, else early
  std::optional<std::uint64_t> seed;  // empty: the file header's `# seed:`, else 0
  int inputs = 3;
  std::string svg;
  std::string dot;
  InputOptions input;
};

int runDraw(const DrawCmdOptions& options) {
  const char* me = "wbcheck draw";
  std::optional<InputText> text = readInput(options.file, options.input);
  if (!text) return kInputError;
  const campaign::ArtifactHeader header = campaign::parseArtifactHeader(text->text());
  const std::string placementName =
      !options.placement.empty() ? options.placement : !header.placement.empty() ? header.placement : "early";
  const std::optional<Placement> placement = placementFromString(placementName);
  if (!placement) {
    std::cerr << me << ": unknown placement '" << placementName << "'\n";
    return kInputError;
  }
  if (options.inputs < 1 || options.inputs > 1000) {
    std::cerr << me << ": --inputs must be between 1 and 1000\n";
    return kInputError;
  }
  if (!options.svg.empty() && !draw::findOnPath("dot")) {
    std::cerr << me << ": " << draw::kDotMissing << "\n";
    return kInputError;
  }
  std::optional<LoadedProgram> loaded = loadProgram(options.file, text->text(), options.input);
  text.reset();
  if (!loaded) return kInputError;

  draw::DrawOptions drawOptions;
  drawOptions.placement = *placement;
  drawOptions.seed = options.seed ? *options.seed : header.seed.value_or(0);
  drawOptions.inputs = options.inputs;
  drawOptions.title = options.file == "-" ? "<stdin>" : std::filesystem::path(options.file).filename().string();
  const draw::Drawing drawing = draw::drawProgram(loaded->program, loaded->schemas, drawOptions);

  if (!options.svg.empty()) {
    if (const std::optional<std::string> error = draw::renderWithDot(drawing.dot, "svg", options.svg)) {
      std::cerr << me << ": " << *error << "\n";
      return kInputError;
    }
    std::cerr << me << ": " << drawing.verdict << "; wrote " << options.svg << "\n";
  } else if (!options.dot.empty()) {
    if (!writeFileAtomically(options.dot, drawing.dot)) {
      std::cerr << me << ": cannot write " << options.dot << "\n";
      return kInputError;
    }
    std::cerr << me << ": " << drawing.verdict << "; wrote " << options.dot << "\n";
  } else {
    std::cout << drawing.dot;
  }
  return drawing.refuted ? kViolated : kHolds;
}

}  // namespace

void registerDraw(CLI::App& app, Action& action, const std::vector<std::string>&) {
  auto options = std::make_shared<DrawCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "draw",
      "Draw the program with a placement's write-backs (graphviz), and what the oracle refutes in red.\n"
      "Exit codes: 0 drawn and the placement holds, 1 drawn and the placement is refuted (or fails), "
      "2 usage or input error (or `dot` missing for --svg).");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  addInputOptions(*sub, options->input);
  sub->add_option("--placement", options->placement,
                  placementNames(" | ") + " (pr20744: the latest version; default: the file header's `# placement:`, else early)");
  sub->add_option("--seed", options->seed, "oracle input seed (default: the file header's `# seed:`, else 0)");
  sub->add_option("--inputs", options->inputs, "oracle input sets")->capture_default_str();
  auto* svg = sub->add_option("--svg", options->svg, "write SVG here (runs graphviz's `dot`, found on PATH)");
  sub->add_option("--dot", options->dot, "write the DOT text here")->excludes(svg);
  sub->callback([&action, options] { action = [options] { return runDraw(*options); }; });
}

}  // namespace wb::cli
