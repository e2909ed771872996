// proofs/symbolic.h: symbolic execution of a program into Z3 terms (DESIGN §11, issue 17).
//
// A program is run from symbolic inputs, following the oracle's semantics (oracle/oracle.h,
// oracle/element.cpp, oracle/storage.cpp) step for step, with every hash the oracle computes
// and every op it computes left uninterpreted. The result is the final state the oracle
// observes: every placeholder's storage and every visible output, as terms. Two programs run
// over one Vocabulary share their inputs and functions, so comparing their final states
// (proofs/equivalence.h) asks whether they agree for all inputs and all interpretations.
//
// Element tier (every placeholder has a static shape), the oracle's element tier:
// - Elements are 64-bit bit-vectors. Each placeholder (and get_attr tensor) is an input array
//   Array(BV64, BV64) of its key; its storage starts as the selects of its elements.
// - A storage is held as its elements, one term each: layouts (offset, sizes, strides) are
//   static, so a view is an index map into its base, evaluated when the program is built;
//   writes through views, in-place ops, `out=` ops and copy_ replace the elements they reach.
//   Data-dependent indices (index_put, index.Tensor, index_select, index_copy, index_add,
//   scatter) are symbolic array indices: the operand is an array built from its elements,
//   written with `store` and read with `select` at (index mod dimension) * stride + base, the
//   index taken modulo the dimension as the oracle takes it (bvsmod).
// - Arithmetic the oracle computes element by element (add, sub, rsub, mul, neg, the foreach
//   ops, index_put/index_add/scatter_add accumulation) is an uninterpreted function of the
//   operand elements (`add(x, y, alpha)`); sum and mean are uninterpreted functions of the
//   group of elements each output element reduces (as an array). Data movement (copy, clone,
//   cat, stack, slice_scatter, select_scatter, where, masked_fill, factories, arange, views) is
//   exact, as the oracle does it.
// - Every other op with a schema (the oracle's hashed ops) is a digest function of all its
//   tensor arguments (arrays) and opaque arguments, named by the op, its constant arguments and
//   its argument shapes; element e of channel c (a return, a written argument, a list item) is
//   fill(digest, c, e). Results that alias an argument, `_share_alloc_with_arg_idx` and
//   tuple results read through getitem are handled as the oracle handles them.
// Storage tier (shapes unknown), the oracle's storage tier: one digest term per storage root;
// a value is a root and a static view path; reading through a view folds `combine` over the
// path, writing through a view stores combine(combine(old, path), value), a whole write stores
// the value itself, and a read through the path of the last write through a view yields the
// value written (the oracle's lastPath rule, data-dependent: kept as guarded alternatives).
// `combine`, and every op's digest, are uninterpreted.
//
// Ops without a schema (delegates, undeclared custom ops, call_module, higher-order ops) get
// every behaviour their contract allows (DESIGN §5, issue 20), never "pure": per node, for
// each tensor argument (list elements too) a write flag, and a choice of result: fresh, or an
// alias of one of the tensor arguments. A write replaces the argument's whole storage by a
// function of all the argument values and the old storage; an aliasing result reads its base
// through an unknown view function and writes back through another, so later writes to either
// side are seen on the other. The choices are per node key (shared by the two programs of a
// query); Vocabulary::oracleBehaviour() lists the literals of the behaviour the oracle's draw 0
// gives such ops (no writes, fresh results), so that a refutation can be tried under it first;
// the oracle's other draws (oracle.h: HavocBehaviour) write and alias, and the replay of a
// refutation tries them too (proofs/equivalence.h).
#pragma once

#include <z3++.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir.h"
#include "core/schema.h"
#include "oracle/oracle.h"

namespace wb::proofs {

// What the programs of one query share, created on first use by name in one z3::context: the
// sorts, the inputs, the uninterpreted functions, and the behaviour choices of schema-less ops.
class Vocabulary {
 public:
  explicit Vocabulary(z3::context& ctx);

  z3::context& ctx() const { return *ctx_; }
  z3::sort element() const { return element_; }  // BV64
  z3::sort array() const { return array_; }      // Array(BV64, BV64)
  z3::expr bv(std::uint64_t value) const;
  // The constant array of zeros (every array operand is built over it, so equal elements make
  // equal arrays).
  z3::expr zeros() const { return zeros_; }

  // The function `name`, declared on first use; the same name must come with the same sorts.
  z3::func_decl function(const std::string& name, const std::vector<z3::sort>& domain, const z3::sort& range);
  // A constant symbol of this name (BV64), e.g. an unshaped get_attr's digest.
  z3::expr constant(const std::string& name);
  // A small id for a text, the same in every program of the query (view steps, channels).
  std::uint64_t textId(const std::string& text);

  // An input: an array (element tier) or a digest (storage tier), by input key. `oracleName`
  // is the name the oracle fills it under (oracle::InputValues), `size` its element count.
  struct Input {
    std::string key;
    std::string oracleName;
    bool isArray = true;
    std::int64_t size = 1;
    z3::expr term;
  };
  const Input& input(const std::string& key, const std::string& oracleName, bool isArray, std::int64_t size);
  const std::vector<Input>& inputs() const { return inputs_; }

  // Behaviour choices of schema-less node `nodeKey`: its result (0 fresh, k + 1 alias of tensor
  // argument k) and whether it writes tensor argument k. oracleBehaviour(): the literals
  // "result fresh" and "writes nothing" of every choice made so far.
  z3::expr resultChoice(const std::string& nodeKey);
  z3::expr writeChoice(const std::string& nodeKey, std::size_t k);
  const std::vector<z3::expr>& oracleBehaviour() const { return oracleBehaviour_; }
  struct Choice {
    std::string nodeKey;
    std::string what;  // "result", "writes argument 2"
    z3::expr term;
  };
  const std::vector<Choice>& choices() const { return choices_; }

 private:
  z3::context* ctx_;
  z3::sort element_, array_;
  z3::expr zeros_;
  std::map<std::string, z3::func_decl> functions_;
  std::map<std::string, z3::expr> constants_;
  std::map<std::string, std::uint64_t> textIds_;
  std::map<std::string, std::size_t> inputIndex_;
  std::vector<Input> inputs_;
  std::vector<Choice> choices_;
  std::map<std::string, std::size_t> choiceIndex_;
  std::vector<z3::expr> oracleBehaviour_;
};

// One observation of the oracle's (oracle::Observation), as terms: element tier, the elements
// in row-major order; storage tier, one digest; a non-tensor value, one term.
struct SymbolicObservation {
  std::string label;
  std::vector<z3::expr> values;
};

struct SymbolicRun {
  oracle::Tier tier = oracle::Tier::Element;
  std::vector<SymbolicObservation> placeholders;  // every placeholder, in graph order
  std::vector<SymbolicObservation> outputs;       // visible outputs, in order
  // Some `*_copy` view variant was met (the alias-views run may differ from the copy-views one).
  bool dependsOnViewMode = false;
};

struct SymbolicOptions {
  oracle::Tier tier = oracle::Tier::Element;
  oracle::ViewMode viewMode = oracle::ViewMode::CopyViews;
  // The program runs as it stands (oracle's Semantics::Placed, compiled as a placed program:
  // no end writes); otherwise S_par (read every mutation value, then write every target).
  bool placed = false;
  // Element tier: most element terms one run may hold (a compile error beyond, as the
  // oracle's memory cap). Storage tier: most reads, writes and views of values one run
  // may make.
  std::size_t maxElements = std::size_t{1} << 20;
  // Both tiers: the run stops, with the reason, when Z3's allocations (smt.h: z3MemoryMb) pass
  // this many MB after a node (0: no limit). A program whose terms outgrow it gets no verdict.
  std::uint32_t memoryMb = 0;
};

// The identity of every node of a program that the two programs of a query share (see
// proofs/match.h): inputs by their signature, other nodes by their structure. Indexed like
// the program's nodes; `inputKeys[i]` is set for placeholders and get_attr tensors.
struct NodeKeys {
  std::vector<std::string> nodes;
};

// Runs a valid program (validate()) symbolically. Fails, with the reason, where the oracle's
// compile in that tier would fail (a shape unknown, an argument that does not fit, the memory
// cap), and where this encoding does not reach (said so in the message).
Result<SymbolicRun> execute(const Program& program, const SchemaTable& schemas, const NodeKeys& keys,
                            Vocabulary& vocabulary, const SymbolicOptions& options);

}  // namespace wb::proofs
