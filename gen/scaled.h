// gen/scaled.h: two program shapes of any size, for the placement benchmark and its tests.
//
// Built directly in C++ (no text, no FX name bookkeeping), so 10^6-node programs take a
// second to make:
// - chain: B buffers; per buffer a segment of functional ops that reads the buffer's old
//   contents, computes a new value and, now and then, writes it in place (`relu_`, rule R3).
// - decoder: B/2 layers, each with a K and a V cache updated by a functional `index_put` (the
//   mutation values) and read through `slice_copy` views by the attention (hazard H5: the
//   views alias the caches once ExecuTorch turns `*_copy` variants into views).
// Every tensor is small and typed consistently with the shape rules validate() checks (the
// chain's f32[4], the decoder's f32[4, 4] and its positions i64[4]); the shapes are not
// meant to be interpreted element-wise.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/ir.h"

namespace wb::gen {

// N nodes (about: each buffer's segment has at least two), B buffers, one user input `x`.
Program chainProgram(std::size_t nodes, std::size_t buffers);
// N nodes (at least ten per layer), B/2 layers (at least one), user inputs `w`, `pos`, `x`.
Program decoderProgram(std::size_t nodes, std::size_t buffers);

// A placed program as a sequence of labels, to compare placements made by different
// implementations: each node by its name, each copy_ as `copy(buffer<-value)` (the models name
// their copies as FX does, `copy__default`, ...; `early` as wbcheck does, `copy_`, ...), then
// the returned values' labels.
std::vector<std::string> placementLayout(const Program& program);

}  // namespace wb::gen
