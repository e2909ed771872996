// cli/draw_cmd.cpp: `wbcheck draw FILE [--placement P] [--seed S] [--inputs N] [--behaviours N] [--svg OUT |
// --dot OUT]`:
// the program with one placement's write-backs as a picture, and what the oracle refutes drawn
// into it (draw/draw.h). Without --svg or --dot the DOT text goes to standard output.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/finding_file.h"
#include "draw/draw.h"
#include "draw/render.h"

namespace wb::cli {

namespace {

struct DrawCmdOptions {
  FindingFileOptions finding;
  std::string svg;
  std::string dot;
};

int runDraw(const DrawCmdOptions& options) {
  const char* me = "wbcheck draw";
  std::optional<FindingFile> finding = readFindingFile(options.finding, me, [&]() -> std::optional<std::string> {
    if (!options.svg.empty() && !draw::findOnPath("dot")) return std::string(draw::kDotMissing);
    return std::nullopt;
  });
  if (!finding) return kInputError;
  const std::string& file = options.finding.file;

  draw::DrawOptions drawOptions;
  drawOptions.placement = finding->placement;
  drawOptions.seed = finding->seed;
  drawOptions.inputs = options.finding.inputs;
  drawOptions.behaviours = finding->behaviours;
  drawOptions.title = file == "-" ? "<stdin>" : std::filesystem::path(file).filename().string();
  const draw::Drawing drawing = draw::drawProgram(finding->loaded.program, finding->loaded.schemas, drawOptions);

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
  addFindingFileOptions(*sub, options->finding, "oracle input sets");
  auto* svg = sub->add_option("--svg", options->svg, "write SVG here (runs graphviz's `dot`, found on PATH)");
  sub->add_option("--dot", options->dot, "write the DOT text here")->excludes(svg);
  sub->callback([&action, options] { action = [options] { return runDraw(*options); }; });
}

}  // namespace wb::cli
