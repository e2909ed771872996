// bench/oracle_cases.h: the programs issue 4's throughput is measured on, shared by
// oracle_bench (wall clock) and check_instructions (instructions per check, under callgrind):
// a hand-written KV-cache decoder step and generated programs of ~30 body nodes (fixed seeds),
// nine cases in all, each with its schema table and its `early` placement.
#pragma once

#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "gen/generator.h"

namespace wb::bench {

inline const char* kDecoderStep = R"(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, b_k: "f32[2, 8, 4]", b_v: "f32[2, 8, 4]", b_n: "i64[1]", p_w: "f32[4, 4]", x: "f32[2, 1, 4]", pos: "i64[1]"):
            q: "f32[2, 1, 4]" = torch.ops.aten.mul.Tensor(x, 3)
            k: "f32[2, 1, 4]" = torch.ops.aten.add.Tensor(x, 1)
            v: "f32[2, 1, 4]" = torch.ops.aten.sub.Tensor(x, 2)
            kp: "f32[2, 8, 4]" = torch.ops.aten.index_put_.default(b_k, [None, pos], k)
            vp: "f32[2, 8, 4]" = torch.ops.aten.index_copy.default(b_v, 1, pos, v)
            kt: "f32[2, 4, 8]" = torch.ops.aten.transpose.int(kp, 1, 2)
            s: "f32[2, 1, 8]" = torch.ops.aten.bmm.default(q, kt)
            sm: "f32[2, 1, 8]" = torch.ops.aten._softmax.default(s, -1, False)
            o: "f32[2, 1, 4]" = torch.ops.aten.bmm.default(sm, vp)
            o2: "f32[2, 4]" = torch.ops.aten.view_copy.default(o, [2, 4])
            w: "f32[2, 4]" = torch.ops.aten.mm.default(o2, p_w)
            r: "f32[2, 4]" = torch.ops.aten.relu.default(w)
            sl: "f32[2, 2]" = torch.ops.aten.slice_copy.Tensor(r, 1, 0, 2)
            sc: "f32[2, 4]" = torch.ops.aten.slice_scatter.default(r, sl, 1, 2, 4)
            m: "f32[2, 4]" = torch.ops.aten.mean.dim(sc, [0], True)
            e: "f32[2, 4]" = torch.ops.aten.expand_copy.default(m, [2, 4])
            y: "f32[2, 4]" = torch.ops.aten.add.Tensor(sc, e)
            n1: "i64[1]" = torch.ops.aten.add.Tensor(b_n, 1)
            c: "f32[4, 4]" = torch.ops.aten.cat.default([y, sc])
            z: "f32[4]" = torch.ops.aten.sum.dim_IntList(c, [0])
            u: "f32[2, 4]" = torch.ops.aten.where.self(y, sc, r)
            st: "f32[2, 2, 4]" = torch.ops.aten.stack.default([u, y])
            g: "f32[2, 4]" = torch.ops.aten.select_copy.int(st, 0, 1)
            out: "f32[2, 4]" = torch.ops.aten.mul.Tensor(g, u)
            return (kp, vp, n1, out, z)

Graph signature:
    # inputs
    b_k: BUFFER target='k' persistent=True
    b_v: BUFFER target='v' persistent=True
    b_n: BUFFER target='n' persistent=True
    p_w: PARAMETER target='w'
    x: USER_INPUT
    pos: USER_INPUT

    # outputs
    kp: BUFFER_MUTATION target='k'
    vp: BUFFER_MUTATION target='v'
    n1: BUFFER_MUTATION target='n'
    out: USER_OUTPUT
    z: USER_OUTPUT
)";

struct Case {
  Program program;
  SchemaTable schemas;
  Program placed;  // place(early) of program
};

inline std::vector<Case> cases() {
  std::vector<Case> out;
  Result<Program> decoder = readProgram(kDecoderStep, "decoder");
  if (decoder) out.push_back({*decoder, schemasFor(*decoder, builtinSchemas()), {}});
  gen::GenOptions options;
  options.maxNodes = 30;
  gen::Generator generator(options);
  for (std::uint64_t seed = 0; out.size() < 9 && seed < 500; ++seed) {
    gen::RandomChoices choices(seed);
    gen::Generated g = generator.generate(choices);
    std::size_t body = g.program.graph.nodes.size();
    if (body < 25) continue;  // keep the ~30-node ones
    out.push_back({g.program, schemasFor(g.program, generator.schemas()), {}});
  }
  for (Case& c : out) c.placed = place(c.program, Placement::Early, c.schemas).program;
  return out;
}

}  // namespace wb::bench
