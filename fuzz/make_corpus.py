#!/usr/bin/env python3
"""fuzz/make_corpus.py: writes the checked-in seed corpora and the text dictionary of the fuzz
targets, deterministically.

  fuzz/corpus/generator/       byte files for gen::ByteChoices (program_fuzzer, placement_fuzzer, model_fuzzer):
                               SHA-256 streams of several lengths (each length reaches a
                               different program size), plus the edge cases (empty, all zeros,
                               all ones).
  fuzz/corpus/text/            text (text_fuzzer, text_program_fuzzer): small valid programs in
                               the three printed forms, and malformed text: truncations of
                               hazard programs, broken brackets, deep nesting, binary bytes,
                               huge numbers, misspelt kinds.
  fuzz/text.dict               every op of core/schemas.txt as PyTorch prints it, plus the
                               keywords, signature kinds and tokens of the three forms.
Run from anywhere: python3 fuzz/make_corpus.py. The same script gives the same files.
"""
import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def stream(seed: int, length: int) -> bytes:
    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(f"wbcheck-fuzz-{seed}-{counter}".encode()).digest()
        counter += 1
    return out[:length]


def write(directory: str, name: str, data: bytes) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def program_corpus() -> None:
    d = os.path.join(HERE, "corpus", "generator")
    # The swarm policy alone takes ~50 bytes (two per flip), so programs start past that.
    lengths = [128, 192, 256, 384, 512, 768, 1024]
    for i in range(40):
        write(d, f"gen_{i:04d}", stream(i, lengths[i % len(lengths)]))
    for length in (8, 32, 64):
        write(d, f"short_{length}", stream(1000 + length, length))
    write(d, "edge_empty", b"")
    write(d, "edge_zeros", bytes(256))
    write(d, "edge_ones", b"\xff" * 256)
    write(d, "edge_alternating", b"\x00\xff" * 128)


FORM1 = '''ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "f32[4]", x: "f32[4]"):
            add: "f32[4]" = torch.ops.aten.add.Tensor(b_s, x)
            mul: "f32[4]" = torch.ops.aten.mul.Tensor(b_s, 2)
            return (add, mul)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT

    # outputs
    add: BUFFER_MUTATION target='s'
    mul: USER_OUTPUT
'''

FORM2 = '''class GraphModule(torch.nn.Module):
    def forward(self, b_cache: "f32[2, 4]", x: "f32[4]"):
        select: "f32[4]" = torch.ops.aten.select.int(b_cache, 0, 0)
        add: "f32[4]" = torch.ops.aten.add.Tensor(select, x);  select = None
        copy_: "f32[2, 4]" = torch.ops.aten.copy_.default(b_cache, b_cache);  b_cache = None
        return (add,)
'''

FORM2_BARE = '''def forward(self, x, y):
    add = torch.ops.aten.add.Tensor(x, y)
    relu_ = torch.ops.aten.relu_.default(add)
    copy_ = torch.ops.aten.copy_.default(x, relu_);  x = None
    return (add,)
'''

FORM3 = '''graph():
    %b_s : [num_users=2] = placeholder[target=b_s]
    %x : [num_users=1] = placeholder[target=x]
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%b_s, %x), kwargs = {})
    %copy_ : [num_users=0] = call_function[target=torch.ops.aten.copy_.default](args = (%b_s, %add), kwargs = {})
    return (add,)
'''

SHARE_ALLOC = '''ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_s: "i64[3]", x: "i64[3]"):
            neg: "i64[3]" = torch.ops.aten.neg.default(x)  # meta: _share_alloc_with_arg_idx=0
            add: "i64[3]" = torch.ops.aten.add.Tensor(b_s, neg)
            return (add, neg)

Graph signature:
    # inputs
    b_s: BUFFER target='s' persistent=True
    x: USER_INPUT

    # outputs
    add: BUFFER_MUTATION target='s'
    neg: USER_OUTPUT

Schemas:
    my_ops::mystery(Tensor(a!) x) -> Tensor(a!)
'''

# A signature printed on its own after the graph (no `Graph signature:` heading), in both forms:
# repr(ep.graph_signature) on one line and pretty-printed, and the text form.
BARE_REPR = FORM3 + (
    "ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.BUFFER: 3>, arg=TensorArgument(name='b_s'), "
    "target='s', persistent=True), InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='x'), "
    "target=None, persistent=None)], output_specs=[OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, "
    "arg=TensorArgument(name='add'), target=None)])\n")

BARE_REPR_PRETTY = FORM1.split("\nGraph signature:")[0] + '''
ExportGraphSignature(
    input_specs=[
        InputSpec(
            kind=<InputKind.BUFFER: 3>,
            arg=TensorArgument(name='b_s'),
            target='s',
        ),
        InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='x'), target=None),
    ],
    output_specs=[
        OutputSpec(kind=<OutputKind.BUFFER_MUTATION: 3>, arg=TensorArgument(name='add'), target='s'),
        OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, arg=TensorArgument(name='mul'), target=None),
    ],
)
Range constraints: {}
'''

BARE_TEXT = FORM1.split("\nGraph signature:")[0] + '''
# inputs
b_s: BUFFER target='s' persistent=True
x: USER_INPUT

# outputs
add: BUFFER_MUTATION target='s'
mul: USER_OUTPUT
'''

MALFORMED = {
    "bad_trailing_garbage": FORM1 + "\nThis paragraph is not part of the program.\n",
    "bad_garbage_before_bare_repr": BARE_REPR.replace("ExportGraphSignature(", "by the way\nExportGraphSignature(", 1),
    "bad_bare_repr_unknown_name": BARE_REPR.replace("name='x'", "name='y'"),
    "bad_bare_repr_truncated": BARE_REPR[: len(BARE_REPR) - 60],
    "bad_bare_text_missing_placeholder": BARE_TEXT.replace("x: USER_INPUT\n", ""),
    "bad_unclosed_call": "def forward(self, x):\n    y = torch.ops.aten.add.Tensor(x,\n",
    "bad_mismatched_bracket": "def forward(self, x):\n    y = torch.ops.aten.cat.default([x, x)\n    return y\n",
    "bad_unterminated_string": "def forward(self, x):\n    y = torch.ops.aten.div.Tensor_mode(x, 2, rounding_mode = 'floor)\n    return y\n",
    "bad_deep_brackets": "def forward(self, x):\n    y = torch.ops.aten.cat.default(" + "[" * 5000 + "]" * 5000 + ")\n    return y\n",
    "bad_deep_parens": "def forward(self, x):\n    y = torch.ops.aten.cat.default(" + "(" * 5000 + ")\n",
    "bad_deep_minus": "def forward(self, x):\n    y = torch.ops.aten.mul.Tensor(x, " + "-" * 5000 + "1)\n    return y\n",
    "bad_huge_int": "def forward(self, x):\n    y = torch.ops.aten.full.default([2], 99999999999999999999999)\n    return y\n",
    "bad_huge_dim": 'def forward(self, x: "f32[99999999999999999999, 2]"):\n    return x\n',
    "bad_many_dims": 'def forward(self, x: "f32[' + ", ".join(["1"] * 40) + ']"):\n    return x\n',
    "bad_undefined": "def forward(self, x):\n    y = torch.ops.aten.add.Tensor(x, w)\n    return y\n",
    "bad_use_before_def": "def forward(self, x):\n    y = torch.ops.aten.relu.default(z)\n    z = torch.ops.aten.relu.default(x)\n    return y\n",
    "bad_duplicate": "def forward(self, x):\n    y = torch.ops.aten.relu.default(x)\n    y = torch.ops.aten.relu.default(x)\n    return y\n",
    "bad_unknown_kind": FORM1.replace("USER_INPUT", "USER_INPT"),
    "bad_unknown_output_kind": FORM1.replace("BUFFER_MUTATION", "BUFFER_MUTATON"),
    "bad_second_signature": FORM1 + "\nGraph signature:\n    # inputs\n",
    "bad_meta": "def forward(self, x):\n    y = torch.ops.aten.relu.default(x)  # meta: oops\n    return y\n",
    "bad_statement_after_return": "def forward(self, x):\n    return (x,)\n    y = torch.ops.aten.relu.default(x)\n",
    "bad_str_graph_kind": "graph():\n    %x : [num_users=1] = placehold[target=x]\n    return (x,)\n",
    "bad_str_graph_after_return": "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (x,)\n    %y : [num_users=0] = placeholder[target=y]\n",
    "bad_binary": b"graph():\n    %x\x01\x02\x00\xff : [num_users=1]\n",
    "bad_elf": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)),
    "bad_empty": "",
    "bad_only_comments": "# nothing\n\n   \n",
    "bad_prose": "hello world\nthis is prose\n",
    "bad_class_no_forward": "class M(torch.nn.Module):\n    def __init__(self):\n        pass\n",
    "bad_exported_no_class": "ExportedProgram:\n    def forward(self, x):\n        return x\n",
    "bad_repr_signature": "def forward(self, x):\n    return (x,)\nGraph signature: ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.BUFER: 3>, arg=TensorArgument(name='x'), target=None)], output_specs=[])\n",
    "bad_dict_arg": "def forward(self, x):\n    y = torch.ops.my.op.default(x, {1: 2})\n    return y\n",
    "bad_tabs_and_crlf": "def forward(self, x):\r\n\ty = torch.ops.aten.relu.default(x)\r\n\treturn y\r\n",
    "bad_schema_section": FORM1 + "\nSchemas:\n    my_ops::broken(Tensor(a! x) -> \n",
    "bad_mutation_of_missing_buffer": FORM1.replace("target='s'\n    mul", "target='nope'\n    mul"),
    "bad_long_line": "def forward(self, x):\n    y = torch.ops.aten.cat.default([" + ", ".join(["x"] * 20000) + "])\n    return y\n",
}


def text_corpus() -> None:
    d = os.path.join(HERE, "corpus", "text")
    for name, text in [("form1_buffer_add", FORM1), ("form2_select_copy", FORM2), ("form2_bare_relu_", FORM2_BARE),
                       ("form3_str_graph", FORM3), ("form1_share_alloc_schemas", SHARE_ALLOC),
                       ("form3_bare_repr_signature", BARE_REPR), ("form1_bare_repr_signature_pretty", BARE_REPR_PRETTY),
                       ("form1_bare_text_signature", BARE_TEXT)]:
        write(d, name + ".txt", text.encode())
    for name, text in MALFORMED.items():
        write(d, name + ".txt", text if isinstance(text, bytes) else text.encode())
    # Truncations of hazard programs: every paste cut short must be rejected with a position or
    # read as a smaller program, never crash.
    hazards = os.path.join(ROOT, "corpus", "hazards")
    for name in sorted(os.listdir(hazards))[:6]:
        with open(os.path.join(hazards, name), "rb") as f:
            text = f.read()
        stem = name[:-4] if name.endswith(".txt") else name
        for fraction in (3, 2):
            cut = len(text) * (fraction - 1) // fraction
            write(d, f"trunc_{stem}_{fraction}.txt", text[:cut])


TOKENS = [
    # form 1
    "ExportedProgram:", "class GraphModule(torch.nn.Module):", "def forward(self, ", "return (", "return ()",
    "Graph signature:", "    # inputs", "    # outputs", "Range constraints: {}", "Schemas:",
    " target='", " persistent=True", " persistent=False", ": \"f32[4]\"", "\"i64[]\"", "\"f32[2, 3]\"",
    "\"Sym(s0)\"", "\"f32[s0, 4]\"", ";  ", " = None", "# meta: _share_alloc_with_arg_idx=0", "# File: ",
    "self._tensor_constant0", "self.lowered_module_0", "getitem = ", "[0]",
    # signature kinds
    "USER_INPUT", "PARAMETER", "BUFFER", "CONSTANT_TENSOR", "CUSTOM_OBJ", "TOKEN", "USER_OUTPUT",
    "LOSS_OUTPUT", "BUFFER_MUTATION", "USER_INPUT_MUTATION", "GRADIENT_TO_PARAMETER", "GRADIENT_TO_USER_INPUT",
    # repr signature
    "ExportGraphSignature(input_specs=[", "output_specs=[", "InputSpec(kind=<InputKind.BUFFER: 3>, ",
    "InputSpec(kind=<InputKind.USER_INPUT: 1>, ", "OutputSpec(kind=<OutputKind.BUFFER_MUTATION: 3>, ",
    "OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, ", "arg=TensorArgument(name='", "target=None", "persistent=None",
    "ExportGraphSignature(\n    input_specs=[\n", "\n    ],\n    output_specs=[\n", "\n    ],\n)\n",
    "InputSpec(kind=<InputKind.PARAMETER: 2>, ", "InputSpec(kind=<InputKind.CONSTANT_TENSOR: 4>, ",
    "OutputSpec(kind=<OutputKind.USER_INPUT_MUTATION: 6>, ", "arg=ConstantArgument(name='', value=", "\n# inputs\n",
    "\n# outputs\n", "arg0_1", "b_", "p_",
    # form 3
    "graph():", "%", " : [num_users=1] = ", "placeholder[target=", "call_function[target=", "get_attr[target=",
    "call_module[target=", "output[target=output]", "](args = (", "), kwargs = {})", ":=",
    # targets and tokens
    "torch.ops.aten.", "torch.ops.higher_order.cond", "executorch.exir.dialects.edge._ops.aten.", "operator.getitem",
    "torch.ops.higher_order.executorch_call_delegate", "executorch_call_delegate", ".default", ".Tensor", ".Scalar",
    "torch.float32", "torch.int64", "torch.bool", "torch.contiguous_format", "device(type='cpu')", "torch.strided",
    "None", "True", "False", "inf", "-1", "1e-05",
    # schemas
    "Tensor(a!)", "Tensor(a)", "Tensor(a -> *)[]", "Tensor(a!)[]", "Tensor?", "int[]", "Scalar", " -> Tensor", " -> ()",
    "my_ops::mystery(Tensor(a!) x) -> Tensor(a!)",
]


def dict_entry(text: str) -> str:
    """One entry in libFuzzer's dictionary syntax: a quoted line in which only `\\`, `\"` and
    `\xAB` are escapes, so a newline or any other byte outside printable ASCII is written as \xAB
    (libFuzzer rejects the whole file on a raw newline: ParseDictionaryFile's "error in line")."""
    out = []
    for b in text.encode():
        c = chr(b)
        if c in '\\"':
            out.append("\\" + c)
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append(f"\\x{b:02X}")
    return '"' + "".join(out) + '"'


def text_dictionary() -> None:
    entries = []
    with open(os.path.join(ROOT, "core", "schemas.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name = line.split("(", 1)[0]
            ns, op = name.split("::", 1) if "::" in name else ("aten", name)
            if "." not in op:
                op += ".default"
            entries.append(f"torch.ops.{ns}.{op}")
    lines = ["# fuzz/text.dict: written by fuzz/make_corpus.py (ops of core/schemas.txt, then tokens)."]
    seen = set()
    for e in entries + TOKENS:
        if e not in seen:
            seen.add(e)
            lines.append(dict_entry(e))
    with open(os.path.join(HERE, "text.dict"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    text_dictionary()
    program_corpus()
    text_corpus()
