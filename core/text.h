// core/text.h: reading the programs PyTorch prints, and writing them back (DESIGN §3).
//
// Accepted forms: `print(exported_program)` (form 1), `print_readable()` / `graph_module.code`
// (form 2, including `ep.module()` code and minifier repro files), and `str(graph)` (form 3),
// each with or without a graph signature (text or repr form). Without a signature one is
// inferred: placeholders are inputs and a trailing block of `copy_(placeholder, value)` nodes is
// lifted into mutation outputs. The writer always emits form 1, which this reader reads back to
// an equal Program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir.h"

namespace wb {

// Caps that keep hostile input from exhausting memory or the stack.
struct ReadLimits {
  std::size_t maxBytes = std::size_t{1} << 30;  // whole input (a 10^6-node printout is ~74 MB)
  std::size_t maxNodes = 2'000'000;
  std::size_t maxListLength = 100'000;    // items in one list or tuple literal
  std::size_t maxNesting = 64;            // brackets inside one expression
  std::size_t maxDims = 16;               // dimensions in one shape
  std::int64_t maxDimSize = std::int64_t{1} << 40;
};

// Reads a program. `fileName` is used in diagnostics only. The reader stops at the first error
// and returns it with its position; it checks what it can see itself (syntax, limits, duplicate
// names, references to undefined or later nodes, signature names that are no node) and leaves
// the rest of the structure to validate().
//
// Every line of the input is read or is an error; nothing is skipped unread:
// - Before the program: blank lines and `#` comments (a wbcheck file's header). Module code
//   (form 2: `class ...`, a bare `def forward`) may also have the statements of a Python
//   module around it (a minifier repro's imports, `load_args` and driver): imports,
//   assignments, calls and `def`/`if`/`with` blocks, whose bodies are lexed, not interpreted.
// - After the graph: blank lines, `#` comments, the graph signature (with or without the
//   `Graph signature:` heading; the text form `# inputs` / `# outputs` or the repr form
//   `ExportGraphSignature(...)`, on one line or pretty-printed), `Range constraints: {...}`
//   (kept as printed) and `Schemas:`; for module code also module statements. Anything else
//   is an error at its position.
// - An explicit signature is checked against the graph: an input spec that names no
//   placeholder, a placeholder named twice or not at all, an output spec that names no node,
//   or more or fewer output specs than returned values are errors at the spec (or the
//   signature's first line). It is never replaced by an inferred one.
//
// Decisions the formats leave open:
// - Inferred signatures (only where the input prints none; Program::signatureInferred, and the
//   writer says so in a comment that reads back to the same flag): `b_x` is a BUFFER with target "x" and persistent=True; `p_x` a
//   PARAMETER; `c_x` and `_lifted_tensor_constant*` CONSTANT_TENSORs; anything else a USER_INPUT
//   (so make_fx's `b_1` reads as a buffer). Only copies into BUFFER or USER_INPUT placeholders
//   are lifted; the block stops at the first copy (from the end) that cannot be.
// - Unlifted code (`ep.module()`): a `self.a.b` read that a trailing copy_ writes becomes a BUFFER
//   placeholder that keeps its code name (`a_b`, not FX's `b_a_b`), with target "a.b", moved in
//   front of the other placeholders; other attribute reads stay get_attr nodes.
// - `return x` keeps a single value (output.args[0] is the Ref), `return (x,)` a tuple.
// - Submodules (nested classes, at any depth) are kept flat in the order their classes start.
// - Infix operators on symbolic sizes (`sym_size_int * 2`) read as `operator.mul` calls.
//
// read(write(p)) == p holds for every program whose graphs are in form-1 order (placeholders
// first, one output node last), whose call targets are normalised (normaliseTarget(t) == t),
// node names are identifiers, and whose meta values contain no ',' and placeholders carry no meta.
Result<Program> readProgram(std::string_view text, std::string_view fileName = "<string>",
                            const ReadLimits& limits = {});
// The same, and where each node of the main graph was defined (the line and column of its
// name; of `return` for the output node), in graph order: what validate() puts its errors about
// nodes at (core/validate.h).
Result<Program> readProgram(std::string_view text, std::string_view fileName, const ReadLimits& limits,
                            std::vector<SourceLocation>* nodeLocations);

// Writes form 1: "ExportedProgram:", the class with forward(), "Graph signature:" in text form,
// and, when present, "Schemas:" and "Range constraints:". Node meta is written as a trailing
// `# meta: k=v` comment.
std::string writeProgram(const Program& program);

// The printed forms a pass command can be given (DESIGN §3; docs/pass-protocol.md, --pass-form).
// Each is written so that readProgram reads it back to an equal program (read(write(p, f)) == p,
// under the same conditions as form 1), or not at all (programFormCannotCarry):
// - ExportedProgram (1): `print(exported_program)`, writeProgram(program).
// - GraphModuleCode (2): `graph_module.code` as FX generates it (a bare `def forward(self, ...)`,
//   four-space body, `;  x = None` after a value's last use), with print_readable()'s type
//   annotations (the shapes the oracle runs with; gm.code alone has none) and followed by the
//   graph signature in text form (PyTorch prints none with the code, but the mutation outputs are
//   what the pass works on), `Schemas:` and `Range constraints:`.
// - StrGraph (3): `str(graph)` (`graph():`, `%name : Tensor "f32[4]" [num_users=1] =
//   call_function[target=...](args = (...), kwargs = {...})`, `return (...)`), followed by the
//   same sections as form 2.
enum class ProgramForm : std::uint8_t { ExportedProgram = 1, GraphModuleCode = 2, StrGraph = 3 };

// Writes `program` in `form`; ExportedProgram is writeProgram(program). Call only when
// programFormCannotCarry(program, form) is empty.
std::string writeProgram(const Program& program, ProgramForm form);

// Why `form` cannot carry `program` whole (empty when it can): forms 2 and 3 print one graph,
// so a program with submodules (control-flow branches) needs form 1.
std::string programFormCannotCarry(const Program& program, ProgramForm form);

// A single argument of a node of `graph` as PyTorch prints it inside a call: `x` (the name of
// the node a reference indexes), `[2, 2]`, `torch.float32`, 'none'.
std::string formatArg(const Arg& arg, const Graph& graph);

// The printed target of a normalised one: "aten::add.Tensor" -> "torch.ops.aten.add.Tensor",
// "aten::copy_" -> "torch.ops.aten.copy_.default".
std::string printTarget(std::string_view normalisedTarget);
// The inverse, for every spelling PyTorch uses: "torch.ops.aten.add.Tensor",
// "executorch.exir.dialects.edge._ops.aten.add.Tensor", "torch.ops.aten.add" (default
// overload), "torch.ops.higher_order.cond", "operator.getitem".
std::string normaliseTarget(std::string_view printedTarget);

}  // namespace wb
