// core/reinplace_domain.h: where a `_share_alloc_with_arg_idx` annotation can come from
// (DESIGN §7, executorch-semantics §7).
//
// ExecuTorch's reinplace pass annotates a functional node n with
// `_share_alloc_with_arg_idx = k` only where argument k is safe to overwrite: no later
// call_function uses it (the output node is no use: hazard R-a; a later node that reinplace
// annotated too adds no uses: R-b), and a placeholder only if it is a buffer or user input that
// an output mutates. Export's dead-code elimination runs before, so n itself has users. A
// program whose annotation breaks one of these is outside what ExecuTorch produces: the memory
// planner would put n's result over a value still needed, and a pass that drops n (dead code)
// drops that write. The oracle reports such an annotation as a finding about the program
// (`annotation outside reinplace's domain`), never as a bug of a placement; the generator
// makes annotations only inside the domain.
#pragma once

#include <string>
#include <vector>

#include "core/ir.h"

namespace wb {

struct AnnotationOutsideDomain {
  NodeId node = kNoNode;  // the annotated node (main graph)
  std::string reason;     // "argument 0 (%x) is a user input no output mutates"
};

// Every annotated node of the main graph outside reinplace's domain, in graph order, with the
// first reason that puts it there. Precondition: `program` is valid (validate()).
std::vector<AnnotationOutsideDomain> annotationsOutsideReinplaceDomain(const Program& program);

}  // namespace wb
