// cli/finding_file.h: what the commands that read a finding file (shrink, draw) share: FILE,
// --max-input-mb, --placement, --seed, --inputs and --behaviours, whose defaults come from the
// file's header (`# placement:`, `# seed:`, `# behaviours:`), so that a campaign artifact replays as it was found; and the file
// read once (standard input cannot be read twice: the header and the program come from one read).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "core/placement.h"
#include "oracle/oracle.h"

namespace wb::cli {

struct FindingFileOptions {
  std::string file;
  InputOptions input;
  std::string placement;              // empty: the file header's `# placement:`, else early
  std::optional<std::uint64_t> seed;  // empty: the file header's `# seed:`, else 0
  int inputs = 3;                     // oracle input sets per check
  std::optional<int> behaviours;      // empty: the file header's `# behaviours:`, else the default
};
void addFindingFileOptions(CLI::App& command, FindingFileOptions& options, std::string_view inputsHelp);

struct FindingFile {
  std::string placementName;  // as given or as the header names it ("pr20744", "early", ...)
  Placement placement = Placement::Early;
  std::uint64_t seed = 0;
  int behaviours = oracle::kDefaultBehaviours;  // behaviour draws per check (options, header, default)
  LoadedProgram loaded;
};

// The placement and seed (options first, then the header, then early and 0) and the program;
// nullopt after a message that starts with `me` (an input or usage error: exit 2). `beforeLoading`
// runs once the options are checked and before the program is read (a command's own usage
// checks); a message from it fails the read.
std::optional<FindingFile> readFindingFile(const FindingFileOptions& options, std::string_view me,
                                           const std::function<std::optional<std::string>()>& beforeLoading = {});

}  // namespace wb::cli
