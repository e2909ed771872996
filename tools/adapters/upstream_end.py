#!/usr/bin/env python3
"""tools/adapters/upstream_end.py: an implementation of the write-back pass in Python, outside
wbcheck, for `wbcheck check|fuzz|shrink --pass-cmd` (docs/pass-protocol.md): the one-shot
protocol, or the persistent one with --persistent.

It reads a program in form 1 (as `wbcheck gen` prints it) on standard input and prints the placed
program on standard output, placing copies as ExecuTorch's upstream pass does (executorch-
semantics §1): one `copy_(target, value)` per mutation output, all just before the return, in
output-spec order; the copies come first in the output tuple and the output specs are renamed by
position. That layout is upstream's bug B2, and the sequential order of the copies at the end is
B3/H8: the tests use this adapter to show that a pass in another language is checked, and its
bugs found and shrunk, from the outside. Standard library only; it edits the text, it does not
interpret it.
"""
import re
import sys

RETURN = re.compile(r"^(\s+)return (.*)$")
DEFINITION = re.compile(r"^\s+([A-Za-z_][A-Za-z_0-9]*)(: \"[^\"]*\")? = (?:torch\.ops\.aten\.([A-Za-z_0-9]+)\.[A-Za-z_0-9]+\(([A-Za-z_][A-Za-z_0-9]*))?")
PARAMETER = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)(: \"[^\"]*\")?")
SPEC = re.compile(r"^(\s+)([A-Za-z_][A-Za-z_0-9]*): ([A-Z_]+)(.*)$")
TARGET = re.compile(r"target='([^']*)'")


def place(text: str) -> str:
    lines = text.split("\n")
    forward = next(i for i, l in enumerate(lines) if l.lstrip().startswith("def forward(self"))
    # Annotations of placeholders and nodes: a copy_ is annotated as its value is.
    annotation = {m.group(1): m.group(2) or "" for m in PARAMETER.finditer(lines[forward].split("(self", 1)[1])}
    inplace_of = {}  # node -> the first argument of the in-place aten op that defines it
    names = set(annotation)
    ret = None
    for i in range(forward + 1, len(lines)):
        m = DEFINITION.match(lines[i])
        if m:
            annotation[m.group(1)] = m.group(2) or ""
            names.add(m.group(1))
            if m.group(3) and m.group(3).endswith("_") and not m.group(3).startswith("_"):
                inplace_of[m.group(1)] = m.group(4)
        if RETURN.match(lines[i]):
            ret = i
            break
    indent, returned = RETURN.match(lines[ret]).groups()
    single = not returned.startswith("(")
    values = [v.strip() for v in returned.strip("()").split(",") if v.strip()]

    sig = lines.index("Graph signature:")
    inputs = sig + lines[sig:].index("    # inputs")
    outputs = sig + lines[sig:].index("    # outputs")
    placeholder_of_buffer = {}
    for l in lines[inputs + 1:outputs]:
        m = SPEC.match(l)
        if m and m.group(3) == "BUFFER":
            placeholder_of_buffer[TARGET.search(m.group(4)).group(1)] = m.group(2)
    end = outputs + 1
    specs = []
    while end < len(lines) and SPEC.match(lines[end]):
        specs.append(SPEC.match(lines[end]).groups())
        end += 1

    buffers = set(placeholder_of_buffer.values())

    def inplace_lineage_ends_at_a_buffer(value):
        # Upstream's `_inplace_lineage` accepts any buffer placeholder, not only the target:
        # bug B1 (a value that is another buffer loses its write-back).
        while value in inplace_of:
            value = inplace_of[value]
        return value in buffers

    copies, inserted, copied = [], [], set()
    for _, name, kind, rest in specs:
        if kind == "BUFFER_MUTATION":
            target = placeholder_of_buffer[TARGET.search(rest).group(1)]
        elif kind == "USER_INPUT_MUTATION":
            target = TARGET.search(rest).group(1)
        else:
            continue
        # Upstream skips a value that is an in-place lineage of a buffer: the buffer (it
        # assumes the target) already holds it.
        if kind == "BUFFER_MUTATION" and inplace_lineage_ends_at_a_buffer(name):
            continue
        copied.add(name)
        copy = "copy_"
        k = 0
        while copy in names:
            k += 1
            copy = f"copy__{k}"
        names.add(copy)
        copies.append(copy)
        inserted.append(f"{indent}{copy}{annotation.get(name, '')} = torch.ops.aten.copy_.default({target}, {name})")
    if not copies:
        return text
    # Upstream's layout: the copies first, then every returned value not copied (user outputs
    # and skipped mutations); the specs are renamed by position.
    new_values = copies + [v for v in values if v not in copied]
    renamed = [f"{ind}{new}: {kind}{rest}" for new, (ind, _, kind, rest) in zip(new_values, specs)]
    tuple_text = new_values[0] if single and len(new_values) == 1 else "(" + ", ".join(new_values) + ("," if len(new_values) == 1 else "") + ")"
    lines[outputs + 1:end] = renamed
    lines[ret:ret + 1] = inserted + [f"{indent}return {tuple_text}"]
    return "\n".join(lines)


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
