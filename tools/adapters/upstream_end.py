#!/usr/bin/env python3
"""tools/adapters/upstream_end.py: an implementation of the write-back pass in Python, outside
wbcheck, for `wbcheck check|fuzz|shrink --pass-cmd` (docs/pass-protocol.md): the one-shot
protocol, or the persistent one with --persistent.

It reads a program in form 1 (as `wbcheck gen` prints it) on standard input and prints the placed
program on standard output, doing what ExecuTorch's upstream `insert_write_back_for_buffers_pass`
does (executorch-semantics §2.1-§2.3), line for line:

- `input_name_to_node`: one plain dict from the lifted inputs' targets (buffers, parameters,
  constants, custom objects) and the tensor user inputs' names to their placeholders, a later
  entry hiding an earlier one of the same name;
- a mutation output gets no copy when its target is not in that dict, or when `_inplace_lineage`
  holds: its value is an in-place op's result whose `self` chain ends at *any* buffer (any user
  input, for a user-input mutation), not only the target: bug B1;
- one `copy_(input_name_to_node[target], value)` per other mutation output, all just before the
  return, in output-spec order (named as FX names them: copy__default, copy__default_1, ...): the
  sequential order is B3/H8;
- the new output tuple is the copies followed by the outputs that got none, in order, and the
  mutation specs are renamed by position in it: bug B2;
- `graph.eliminate_dead_code()`: a node nobody uses that is not impure is erased.

The tests use it to show that a pass in another language is checked, and its bugs found and
shrunk, from the outside, with the verdicts of wbcheck's C++ model of the same code
(core/placement_models.cpp). Standard library only; it edits the text, it does not interpret it.
What it knows of schemas is what the text shows: aten ops are known, their in-place kind and
mutability read from their names (`add_`, `.out`), custom ops from the `Schemas:` section.
"""
import re
import sys

RETURN = re.compile(r"^(\s+)return\b ?(.*?)(\s+#.*)?$")
# name[: "type"] = right-hand side
DEFINITION = re.compile(r"^(\s+)([A-Za-z_][A-Za-z_0-9]*)(?:: (\"[^\"]*\"))? = (.*)$")
CALL = re.compile(r"torch\.ops\.([A-Za-z_0-9]+)\.([A-Za-z_0-9]+)(?:\.([A-Za-z_0-9]+))?\((.*)$")
PARAMETER = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)(?:: (\"[^\"]*\"))?")
SPEC = re.compile(r"^(\s+)([A-Za-z_][A-Za-z_0-9]*): ([A-Z_]+)(.*)$")
TARGET = re.compile(r"target='([^']*)'")
NAME = re.compile(r"(?<![.\w])([A-Za-z_][A-Za-z_0-9]*)\b(?!\s*=[^=])")
STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
FIRST_ARG = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*[,)]")
SCHEMA = re.compile(r"^\s+([A-Za-z_0-9]+)::([A-Za-z_0-9]+)(?:\.([A-Za-z_0-9]+))?\((.*)$")

LIFTED_KINDS = ("BUFFER", "CONSTANT_TENSOR", "PARAMETER", "CUSTOM_OBJ")
MUTATION_KINDS = ("BUFFER_MUTATION", "USER_INPUT_MUTATION")
AUGMENTED = {"iadd", "isub", "imul", "idiv", "imod", "ipow", "ilshift", "irshift", "iand", "ixor", "ior"}
# aten ops that write an argument without an in-place or out name.
MUTABLE_ATEN = {"_native_batch_norm_legit"}
# torch/fx/node.py: nodes FX keeps though nobody uses them.
SIDE_EFFECTFUL = {"aten._assert_async", "aten._assert_scalar", "aten._assert_tensor_metadata", "aten.copy_",
                  "aten.set_", "aten.index_put_", "aten.sym_constrain_range", "aten.sym_constrain_range_for_size"}
SEEDED = {"rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "bernoulli",
          "bernoulli_", "dropout", "native_dropout", "normal", "normal_", "uniform_", "multinomial", "poisson",
          "exponential_", "geometric_", "cauchy_", "log_normal_", "random_", "rrelu", "rrelu_with_noise"}


def is_inplace_kind(op):
    """torchgen's SchemaKind.inplace: a trailing underscore, or an augmented dunder."""
    if op.startswith("__") and op.endswith("__") and len(op) > 4:
        return op[2:-2] in AUGMENTED
    return op.endswith("_") and not op.endswith("__")


class Node:
    __slots__ = ("line", "name", "annotation", "namespace", "op", "overload", "first_arg", "uses", "kind")

    def __init__(self, line, name, annotation, rhs):
        self.line, self.name, self.annotation = line, name, annotation or ""
        self.namespace = self.op = self.overload = self.first_arg = None
        call = CALL.match(rhs)
        if call:
            self.kind = "call_function"
            self.namespace, self.op, self.overload, args = call.groups()
            first = FIRST_ARG.match(args)
            self.first_arg = first.group(1) if first else None
        elif rhs.startswith("self.") and "(" in rhs:
            self.kind = "call_module"
        elif rhs.startswith("self."):
            self.kind = "get_attr"
        else:
            self.kind = "call_function"  # operator.getitem (`split[0]`) and the like
        # Every name the right-hand side mentions (strings, keyword names and dotted
        # attributes left out); the caller keeps those that name nodes.
        body = rhs.split("  #", 1)[0]
        body = body[body.index("("):] if call or self.kind == "call_module" else body
        self.uses = NAME.findall(STRING.sub("''", body) if "'" in body or '"' in body else body)


def place(text: str) -> str:
    lines = text.split("\n")
    forward = next(i for i, l in enumerate(lines) if l.lstrip().startswith("def forward(self"))
    parameters = lines[forward].split("(self", 1)[1].rsplit(")", 1)[0]
    placeholders = [(m.group(1), m.group(2) or "") for m in PARAMETER.finditer(parameters)]
    annotation = dict(placeholders)
    nodes, ret = [], None
    for i in range(forward + 1, len(lines)):
        if lines[i].lstrip().startswith("return") and RETURN.match(lines[i]):
            ret = i
            break
        m = DEFINITION.match(lines[i])
        if m:
            nodes.append(Node(i, m.group(2), m.group(3), m.group(4)))
            annotation[m.group(2)] = m.group(3) or ""
    by_name = {n.name: n for n in nodes}
    indent, returned, return_comment = RETURN.match(lines[ret]).groups()
    single = not returned.startswith("(")
    values = [v.strip() for v in returned.strip("()").split(",") if v.strip()]

    sig = lines.index("Graph signature:")
    inputs = sig + lines[sig:].index("    # inputs")
    outputs = sig + lines[sig:].index("    # outputs")
    input_specs = [SPEC.match(l).groups() for l in lines[inputs + 1:outputs] if SPEC.match(l)]
    end = outputs + 1
    specs = []
    while end < len(lines) and SPEC.match(lines[end]):
        specs.append(SPEC.match(lines[end]).groups())
        end += 1
    declared = {}  # "ns.op" -> the schema text, from the Schemas: section
    if "Schemas:" in lines:
        for l in lines[lines.index("Schemas:") + 1:]:
            s = SCHEMA.match(l)
            if not s:
                break
            declared[s.group(1) + "." + s.group(2)] = s.group(4)

    # input_name_to_node: the lifted inputs' targets and the tensor user inputs' names.
    kind_of = {}
    input_name_to_node = {}
    for (name, _), (_, spec_name, kind, rest) in zip(placeholders, input_specs):
        kind_of[name] = kind
        if kind in LIFTED_KINDS:
            input_name_to_node[TARGET.search(rest).group(1)] = name
        elif kind == "USER_INPUT" and (not annotation[name] or "[" in annotation[name]):
            input_name_to_node[spec_name] = name

    def has_schema(node):
        return node.namespace is not None and node.namespace != "higher_order" and (
            node.namespace == "aten" or node.namespace + "." + node.op in declared)

    def inplace_lineage(value, mutation_kind):
        # `_inplace_lineage`: self (args[0]) through in-place ops, to a placeholder of the
        # kind, whichever it is (B1).
        while value in by_name:
            node = by_name[value]
            if not (has_schema(node) and is_inplace_kind(node.op)) or node.first_arg is None:
                return False
            value = node.first_arg
        wanted = "BUFFER" if mutation_kind == "BUFFER_MUTATION" else "USER_INPUT"
        return kind_of.get(value) == wanted

    taken = set(annotation)
    copies, inserted, copied_positions = [], [], set()
    for position, (_, name, kind, rest) in enumerate(specs):
        if kind not in MUTATION_KINDS:
            continue
        target = TARGET.search(rest).group(1)
        if target not in input_name_to_node or inplace_lineage(name, kind):
            continue
        copied_positions.add(position)
        k = len(copies)
        copy = "copy__default" if k == 0 else f"copy__default_{k}"
        while copy in taken:
            k += 1
            copy = f"copy__default_{k}"
        taken.add(copy)
        copies.append(copy)
        value = values[position]
        # copy_ returns its first argument: the copy has the target's type.
        placeholder = input_name_to_node[target]
        typed = f": {annotation[placeholder]}" if annotation.get(placeholder) else ""
        inserted.append(f"{indent}{copy}{typed} = torch.ops.aten.copy_.default({input_name_to_node[target]}, {value})")
    # Upstream's layout: the copies, then every returned value that got none (user outputs and
    # skipped mutations), in order; the mutation specs are renamed by position in it.
    new_values = copies + [v for i, v in enumerate(values) if i not in copied_positions]
    renamed, next_value = [], 0
    for ind, name, kind, rest in specs:
        if kind in MUTATION_KINDS:
            name = new_values[next_value]
            next_value += 1
        renamed.append(f"{ind}{name}: {kind}{rest}")
    if single and len(new_values) == 1:
        tuple_text = new_values[0]
    else:
        tuple_text = "(" + ", ".join(new_values) + ("," if len(new_values) == 1 else "") + ")"

    # eliminate_dead_code: erase, last first, every node without users that is not impure.
    def impure(node):
        if node.kind == "call_module":
            return True
        if node.kind == "get_attr" or node.namespace is None:
            return False
        qualified = node.namespace + "." + node.op
        if node.namespace == "aten":
            mutable = (is_inplace_kind(node.op) or (node.overload or "").endswith("out")
                       or node.op in MUTABLE_ATEN)
        elif qualified in declared:
            mutable = "!" in declared[qualified]
        else:
            mutable = node.namespace != "higher_order"  # an op FX would ask, kept
        return mutable or qualified in SIDE_EFFECTFUL or (node.namespace == "aten" and node.op in SEEDED)

    users = {n.name: 0 for n in nodes}
    inputs_of = {}
    for node in nodes:
        inputs_of[node.name] = {u for u in node.uses if u in users}
        for u in inputs_of[node.name]:
            users[u] += 1
    for v in values:
        if v in users:
            users[v] += 1
    erased = set()
    for node in reversed(nodes):
        if users[node.name] == 0 and not impure(node):
            erased.add(node.line)
            for u in inputs_of[node.name]:
                users[u] -= 1

    lines[outputs + 1:end] = renamed
    lines[ret:ret + 1] = inserted + [f"{indent}return {tuple_text}{return_comment or ''}"]
    return "\n".join(l for i, l in enumerate(lines) if i not in erased)


def serve(place_one):
    """The persistent protocol (docs/pass-protocol.md): frames of a decimal byte count, a newline
    and that many bytes, one program in, one placed program out, until standard input ends."""
    into, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = into.readline()
        if not header:
            return
        program = into.read(int(header))
        placed = place_one(program.decode()).encode()
        out.write(b"%d\n" % len(placed) + placed)
        out.flush()


if __name__ == "__main__":
    if "--persistent" in sys.argv[1:]:
        serve(place)
    else:
        sys.stdout.write(place(sys.stdin.read()))
