// core/placement_models.cpp: models of upstream, PR #20744 and draft #13857 (placeholder).
// The real models replace this shortly; until then each reports "not implemented yet".
#include "core/placement_models.h"

namespace wb {

namespace {
PlacedProgram notImplemented(const Program& program) {
  PlacedProgram placed;
  placed.program = program;
  placed.failure = "not implemented yet";
  return placed;
}
}  // namespace

PlacedProgram placeUpstream(const Program& program, const SchemaTable&) { return notImplemented(program); }
PlacedProgram placePr20744(const Program& program, const SchemaTable&) { return notImplemented(program); }
PlacedProgram placeDraft13857(const Program& program, const SchemaTable&) { return notImplemented(program); }

}  // namespace wb
