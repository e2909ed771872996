// cli/picture.cpp: the picture beside a finding (see cli/picture.h).
#include "cli/picture.h"

#include <filesystem>

#include "campaign/campaign.h"
#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "draw/draw.h"
#include "draw/render.h"

namespace wb::cli {

std::optional<std::string> writeFindingPicture(const std::string& artifact, const std::string& svgPath, int inputs) {
  const campaign::ArtifactHeader header = campaign::parseArtifactHeader(artifact);
  const std::optional<Placement> placement = placementFromString(header.placement);
  if (!placement) return "the finding names no placement";
  Result<Program> program = readProgram(artifact, svgPath);
  if (!program.ok()) return "the finding does not read back: " + formatAll(program.errors);
  if (!validate(*program).empty()) return "the finding is not a valid program";
  draw::DrawOptions options;
  options.placement = *placement;
  options.seed = header.seed.value_or(0);
  options.inputs = inputs;
  options.behaviours = header.behaviours.value_or(oracle::kDefaultBehaviours);
  options.title = std::filesystem::path(svgPath).filename().replace_extension(".txt").string();
  const SchemaTable schemas = schemasFor(*program, builtinSchemas());
  return draw::renderWithDot(draw::drawProgram(*program, schemas, options).dot, "svg", svgPath);
}

}  // namespace wb::cli
