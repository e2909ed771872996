// cli/finding_file.cpp: the finding-file options and read of shrink and draw (cli/finding_file.h).
#include "cli/finding_file.h"

#include <iostream>

#include "campaign/campaign.h"

namespace wb::cli {

void addFindingFileOptions(CLI::App& command, FindingFileOptions& options, std::string_view inputsHelp) {
  command.add_option("FILE", options.file, "program file, or - for standard input")->required();
  addInputOptions(command, options.input);
  command.add_option("--placement", options.placement,
                     placementNames(" | ") +
                         " (pr20744: the latest version; default: the file header's `# placement:`, else early)");
  command.add_option("--seed", options.seed, "oracle input seed (default: the file header's `# seed:`, else 0)");
  command.add_option("--inputs", options.inputs, std::string(inputsHelp))->capture_default_str();
  addBehavioursOption(command, options.behaviours);
}

std::optional<FindingFile> readFindingFile(const FindingFileOptions& options, std::string_view me,
                                           const std::function<std::optional<std::string>()>& beforeLoading) {
  std::optional<InputText> text = readInput(options.file, options.input);
  if (!text) return std::nullopt;
  const campaign::ArtifactHeader header = campaign::parseArtifactHeader(text->text());
  FindingFile out;
  out.placementName =
      !options.placement.empty() ? options.placement : !header.placement.empty() ? header.placement : "early";
  const std::optional<Placement> placement = placementFromString(out.placementName);
  if (!placement) {
    std::cerr << me << ": unknown placement '" << out.placementName << "'\n";
    return std::nullopt;
  }
  out.placement = *placement;
  if (options.inputs < 1 || options.inputs > 1000) {
    std::cerr << me << ": --inputs must be between 1 and 1000\n";
    return std::nullopt;
  }
  if (beforeLoading) {
    if (const std::optional<std::string> error = beforeLoading()) {
      std::cerr << me << ": " << *error << "\n";
      return std::nullopt;
    }
  }
  out.seed = options.seed ? *options.seed : header.seed.value_or(0);
  out.behaviours = options.behaviours ? *options.behaviours : header.behaviours.value_or(oracle::kDefaultBehaviours);
  std::optional<LoadedProgram> loaded = loadProgram(options.file, text->text(), options.input);
  if (!loaded) return std::nullopt;
  out.loaded = std::move(*loaded);
  return out;
}

}  // namespace wb::cli
