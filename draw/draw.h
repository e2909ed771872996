// draw/draw.h: a program as a picture (`wbcheck draw`, DESIGN §12; issue 22). Owns the picture:
// which nodes, edges, colours and words; graphviz lays it out (draw/render.h runs it).
//
// The picture of one placement of a program, top to bottom in program order:
// - placeholders in the first row, shaped by their signature kind (a buffer is a cylinder, a
//   user input a square box, a parameter a 3-d box), then one node per row with its op, arguments
//   and type, then the output tuple, one cell per position with its output spec;
// - data edges from each value to its users;
// - storage: every storage root that more than one value shares, or that a node other than
//   its creator writes, or that a mutation writes back, gets a colour (a legend in the caption
//   names them); a node is filled with the colours of the roots it may share, so aliasing shows
//   at a glance; a node that writes a root says so and its edge from the written value is drawn
//   thick in that root's colour; a `*_copy` view variant says it becomes a view;
// - every write-back `copy_` of the placement has a double border and its reason (the rule and
//   node of `wbcheck place --explain`); a dotted edge from the node that binds it (R2, R3, C);
// - when the oracle or the Z3 ordering proof refutes the placement (draw/refutation.h): the
//   offending copies in red, each broken dependence (the proof's violated constraints when the
//   proof decided, else early's) as a dashed red edge from the node the copy should have
//   followed, labelled with its reason, missing write-backs as dashed red ghosts where early puts them,
//   changed outputs and the diverging buffer or output in red, the first diverging node named,
//   and the verdict in the caption;
// - nodes the placement removed (dead code elimination), as dashed ghosts where they were.
// The DOT text is deterministic: nodes in program order, colours by root order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/placement.h"
#include "core/schema.h"
#include "draw/refutation.h"

namespace wb::draw {

struct DrawOptions {
  Placement placement = Placement::Early;
  // Check the placement with the oracle and draw its refutation; off: the placement only.
  bool check = true;
  std::uint64_t seed = 0;  // oracle input seed (as `wbcheck check --seed`)
  int inputs = 3;          // oracle input sets
  int behaviours = oracle::kDefaultBehaviours;  // behaviour draws of the ops without a schema
  std::string title;       // the caption's first words (a file name); empty: none
};

struct Drawing {
  std::string dot;         // graphviz DOT text
  bool refuted = false;    // the oracle or the ordering proof refuted it, or the placement failed
  std::string verdict;     // one line: what the caption says about the placement
};

// Draws `program` (valid, see validate()) placed with options.placement. `schemas` is
// schemasFor(program, builtinSchemas()).
Drawing drawProgram(const Program& program, const SchemaTable& schemas, const DrawOptions& options);

// The picture of a placed program with its marks, for callers that placed and checked it
// themselves. `drawn` is the program drawn (placed.program, or the input when the placement
// failed), `input` the program before the placement (its nodes that `drawn` lacks are drawn as
// dashed ghosts: a placement that removes dead code), `copies` the placement's explanations,
// `caption` the caption's lines (the verdict first).
std::string toDot(const Program& drawn, const Program& input, const SchemaTable& schemas,
                  const std::vector<CopyExplanation>& copies, const Refutation& refutation, const std::string& title,
                  const std::vector<std::string>& caption);

}  // namespace wb::draw
