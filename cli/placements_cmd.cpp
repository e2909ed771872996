// cli/placements_cmd.cpp: `wbcheck placements`: every placement's name, one a line, in
// allPlacements() order, so that scripts (scripts/main.sh, bench/time_to_find.sh) list the
// placements from the one list the library keeps.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/placement.h"

namespace wb::cli {

void registerPlacements(CLI::App& app, Action& action, const std::vector<std::string>&) {
  CLI::App* sub = app.add_subcommand("placements", "Print every placement's name, one a line");
  sub->callback([&action] {
    action = [] {
      for (Placement placement : allPlacements()) std::cout << toString(placement) << "\n";
      return kHolds;
    };
  });
}

}  // namespace wb::cli
