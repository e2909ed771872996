// core/placement_models.h: faithful models of other implementations of the write-back pass.
//
// They reproduce real algorithms, bugs included, so the suite can show with real code what it
// finds in them (executorch-semantics §2, §4): the upstream ExecuTorch pass, the head of PR
// #20744, and draft PR #13857. They are not meant to be correct; `early` is.
#pragma once

#include "core/placement.h"

namespace wb {

// ExecuTorch main: `_inplace_lineage` accepting any buffer / any user-input placeholder (B1),
// copies just before the output, copies-first output tuple with positional spec renaming (B2),
// then dead-code elimination.
PlacedProgram placeUpstream(const Program& program, const SchemaTable& schemas);

// PR #20744 head (ff2892d4), executorch-semantics §4.2: forward-only alias walk, view_copy as
// non-aliasing, list arguments and _share_alloc_with_arg_idx ignored, IndexError without
// placeholders (reported in PlacedProgram::failure), global end-of-graph fallback.
PlacedProgram placePr20744(const Program& program, const SchemaTable& schemas);

// Draft PR #13857: after the last direct user of the buffer and of the value; no aliasing.
PlacedProgram placeDraft13857(const Program& program, const SchemaTable& schemas);

}  // namespace wb
