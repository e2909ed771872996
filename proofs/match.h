// proofs/match.h: pairing a program with the output of some implementation of the pass.
//
// `wbcheck validate BEFORE AFTER` compares two programs that name their nodes differently:
// AFTER is what a pass printed (ExecuTorch's own, or any other), with copy_ nodes, its own node
// names, possibly independent nodes reordered. They are matched by signature and structure,
// never by node names:
// - inputs by their signature: a buffer, parameter or constant by its target, a user input
//   (token, custom object) by its position among the user inputs (tokens, custom objects);
// - every other node by its structure: its op and target, its literal arguments, and the
//   structural identities of the nodes it reads (the k-th node of one identity in BEFORE is the
//   k-th in AFTER). AFTER's copies and clones have no counterpart.
// These identities (NodeKeys) name the inputs and the behaviour choices of schema-less ops that
// the two symbolic runs share (proofs/symbolic.h). AFTER is then renamed to BEFORE's names and
// its placeholders put in BEFORE's order, so that the oracle, which fills inputs by placeholder
// name and compares placeholders in order, replays both alike.
//
// A program printed without a signature (`str(graph)`): the reader infers one, lifting a
// trailing block of copy_ nodes into mutation outputs (core/text.h). For AFTER that undoes
// what is to be checked, so AFTER is put back as printed: its lifted copies are copy_ nodes
// again, at the end in their order, named `copy__default`, `copy__default_1`, ... as FX names
// them, and since an inferred signature only guesses the inputs' kinds from their names, its
// inputs take BEFORE's input specs, placeholder by placeholder. A BEFORE without a signature
// has no mutation outputs unless its text had trailing copies: one that mutates nothing while
// AFTER writes buffers back is an input error asking for the signature to be written in.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir.h"
#include "core/schema.h"
#include "proofs/symbolic.h"

namespace wb::proofs {

struct PreparedPair {
  Program before, after;  // `after` renamed and reordered (see above); both valid
  SchemaTable beforeSchemas, afterSchemas;
  NodeKeys beforeKeys, afterKeys;
  std::size_t matchedNodes = 0;          // AFTER's nodes with a counterpart in BEFORE
  std::vector<std::string> unmatched;    // AFTER's call nodes without one (its copies, clones)
  std::vector<std::string> notes;        // what was assumed ("AFTER has no signature: ...")
};

// Pairs the two programs; input errors (an invalid program, different inputs, a different
// number of visible outputs, a BEFORE that mutates nothing) are diagnostics naming the file.
Result<PreparedPair> prepare(const Program& before, const Program& after, std::string_view beforeName = "BEFORE",
                             std::string_view afterName = "AFTER");

// The structural identities of a program's nodes (see above), over a table of identities
// shared by the programs compared (so that equal structures get equal keys).
class KeyTable {
 public:
  NodeKeys keysOf(const Program& program);

 private:
  std::unordered_map<std::string, std::size_t> ids_;  // structure text -> id
};

}  // namespace wb::proofs
