// core/placement_models.h: faithful models of other implementations of the write-back pass.
//
// They reproduce real algorithms, bugs included, so the suite can show with real code what it
// finds in them (executorch-semantics §2, §4): the upstream ExecuTorch pass, PR #20744 version
// by version, and draft PR #13857. They are not meant to be correct (`early` is), and a model is
// never "improved": a model that hides a real bug hides what the suite exists to show.
//
// What all of them share with the real code (executorch-semantics §2.1):
// - the choice of write-backs: `_inplace_lineage` accepts *any* buffer (or user-input)
//   placeholder as the end of a lineage, not the spec's own target (bug B1);
// - the output layout: copies first in the output tuple, then every other output in order, and
//   the mutation specs renamed *by position* (bug B2: after a skipped BUFFER_MUTATION, a copied
//   USER_INPUT_MUTATION's spec names the wrong node, and the emitter drops the wrong output);
// - the copies' names as FX gives them: `copy__default`, `copy__default_1`, ... (FX names a node
//   after its target `copy_.default`), so that a model's output compares with what ExecuTorch
//   prints (corpus/real 05 and 07);
// - `graph.eliminate_dead_code()` after the insertion.
// Each model's own real bugs are listed at its function.
#pragma once

#include "core/placement.h"

namespace wb {

// ExecuTorch main (executorch-semantics §2): every copy just before the output node, in
// output-spec order. Real bugs it carries: B1 and B2 (above); B3/H8, the sequential end-of-graph
// order, wrong when one copy reads (through a view_copy that becomes a view, or directly) a
// buffer an earlier copy writes; the lifted-input dict that lets a user input `x` hide a buffer
// with FQN `x`; DCE of an unused storage writer (a pure op carrying _share_alloc_with_arg_idx).
PlacedProgram placeUpstream(const Program& program, const SchemaTable& schemas);

// The versions of PR #20744's branch (pytorch/executorch#20744, shared/seed/).
enum class Pr20744Version {
  // ff2892d4, the head executorch-semantics §4.2 read in code: each copy right after the latest
  // of the last placeholder, the value, every non-output user of a forward alias of the buffer,
  // every user that may write a forward alias of the value; if one pair's buffer aliases meet
  // another's value aliases, every copy goes before the output (the guard G). Real bugs, besides
  // B1 and B2: the alias walk is forward-only (H10); `view_copy` counts as no alias though
  // ReplaceViewCopyWithViewPass makes it one later (H5, and B3 under the fallback); a write
  // through a list argument is missed (H4); _share_alloc_with_arg_idx is ignored (H6);
  // `[placeholders][-1]` raises IndexError on a graph without placeholders, even with nothing
  // to write back (H7); the output node counts as an alias of what it returns, so two returned
  // pairs easily trip the guard; copies anchored at one node come out in reverse.
  Ff2892d4,
  // b6457f4, modelled from the description (the author's reply to the review of 2026-09-11 in
  // the thread; the diff is not in the thread): "placeholders[-1] or returns None in case
  // placeholders is empty", None meaning "no placeholder floor" in `_insertion_point` (the
  // floor starts at the value); "_may_alias_input now returns False for the output node";
  // "_mutates_input also inspects the list/tuple arguments", so a write through a written list
  // argument (`Tensor(a!)[]`) containing the alias counts. H7 and H4 are gone; H5, H6, H10 stay.
  B6457f4,
  // 82a8901, the head the thread ends on, modelled from its commit message (quoted in the
  // thread; the diff is not): "_storage_sharing_inputs reads the annotation, the same edge
  // ReplaceViewCopyWithViewPass follows", "_aliasing_inputs adds it to the schema-derived set"
  // (a node with _share_alloc_with_arg_idx = k joins the alias closure of its argument k), and
  // "_mutates_input treats the shared argument as written". The schema-derived set itself is
  // taken to be ff2892d4's rule (any aliasing return aliases every input, H11), since the
  // message describes no change to it. H6 is gone; H5 and H10 stay.
  At82a8901,
};

// PR #20744 at `version` (see Pr20744Version). Where the real code raises (ff2892d4's
// IndexError) the model reports it in PlacedProgram::failure and returns the program unchanged.
PlacedProgram placePr20744(const Program& program, Pr20744Version version, const SchemaTable& schemas);

// Draft PR #13857, modelled from the description (executorch-semantics §4.1: "inserted after
// max(last direct user of the buffer, last direct user of the value), with no alias handling";
// the diff is not available): each copy right after the latest of the last placeholder, the
// value, every direct non-output user of the buffer placeholder and of the value; copies
// anchored at one node in reverse, as `inserting_after` makes them; upstream's output layout
// (the draft changed where copies go, not `_insert_copy`'s tuple). Real bugs: every alias case
// (H2, H5, H6a, H10), B1, B2, B3/H8.
PlacedProgram placeDraft13857(const Program& program, const SchemaTable& schemas);

}  // namespace wb
