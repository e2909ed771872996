// cli/place_cmd.cpp: `wbcheck place FILE [--placement P] [--explain] [--json]`.
#include <iostream>
#include <utility>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/placement.h"
#include "core/text.h"

namespace wb::cli {

namespace {

struct PlaceOptions {
  std::string file;
  InputOptions input;
  std::string placement = "early";
  bool explain = false;
  bool json = false;
};

nlohmann::json explanationJson(const CopyExplanation& e) {
  return {{"copy", e.copyNode}, {"buffer", e.buffer}, {"value", e.value},
          {"rule", toString(e.rule)},     {"after", e.bindingNode}, {"why", e.text}};
}

int runPlace(const PlaceOptions& options, const std::vector<std::string>& argv) {
  std::optional<Placement> placement = placementFromString(options.placement);
  if (!placement) {
    std::cerr << "wbcheck place: unknown placement '" << options.placement << "'\n";
    return kInputError;
  }
  std::optional<LoadedProgram> loaded = loadProgram(options.file, options.input);
  if (!loaded) return kInputError;
  // The command has no further use for the program it read: hand it over, so `early` moves
  // its nodes into the placed program instead of copying them.
  PlacedProgram placed = place(std::move(loaded->program), *placement, loaded->schemas);

  if (options.json) {
    nlohmann::json out = provenance(argv);
    out["placement"] = toString(*placement);
    out["failure"] = placed.failure ? nlohmann::json(*placed.failure) : nlohmann::json(nullptr);
    out["copies"] = nlohmann::json::array();
    for (const CopyExplanation& e : placed.copies) out["copies"].push_back(explanationJson(e));
    out["skipped"] = placed.skipped;
    out["program"] = writeProgram(placed.program);
    std::cout << out.dump(2) << "\n";
  } else {
    if (placed.failure) {
      std::cerr << "wbcheck place: the " << toString(*placement) << " placement failed: " << *placed.failure << "\n";
    } else {
      std::cout << writeProgram(placed.program);
    }
    if (options.explain) {
      std::cout << "\nWrite-backs (" << toString(*placement) << "):\n";
      for (const CopyExplanation& e : placed.copies)
        std::cout << "    %" << e.copyNode << " = copy_(" << e.buffer << ", " << e.value << "): " << e.text
                  << "  [" << toString(e.rule) << "]\n";
      for (const std::string& s : placed.skipped) std::cout << "    skipped: " << s << "\n";
    }
  }
  // A placement that fails on a valid program is a property violation (it is a bug of the
  // modelled algorithm, e.g. pr20744's IndexError without placeholders).
  return placed.failure ? kViolated : kHolds;
}

}  // namespace

void registerPlace(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<PlaceOptions>();
  CLI::App* sub = app.add_subcommand("place", "Insert the write-back copies and print the placed program (form 1)");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  addInputOptions(*sub, options->input);
  sub->add_option("--placement", options->placement, placementNames(" | ") + " (pr20744: the latest version)")
      ->capture_default_str();
  sub->add_flag("--explain", options->explain, "say why each copy sits where it does");
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->callback([&action, options, argv] { action = [options, argv] { return runPlace(*options, argv); }; });
}

}  // namespace wb::cli
