// cli/picture.h: the picture beside a finding (`fuzz` and `shrink` write NAME.svg beside
// NAME.txt; its header names it: campaign::pictureFileName).
#pragma once

#include <optional>
#include <string>

namespace wb::cli {

// Draws the finding whose artifact text is `artifact` (a shrunk counterexample with its header:
// placement and seed) and writes the SVG to `svgPath`. nullopt on success, else the reason.
std::optional<std::string> writeFindingPicture(const std::string& artifact, const std::string& svgPath, int inputs);

}  // namespace wb::cli
