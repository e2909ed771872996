// gen/zoo.h: a model zoo of realistic stateful programs at scale (DESIGN §9).
//
// Each model is built as torch.export + to_edge would print it just before the write-back
// pass, with full static types: functional edge ops, `*_copy` views, getitems of multi-output
// ops, parameters first, then buffers, then user inputs; outputs are the buffer mutations in
// buffer order, then the user outputs.
//   decoder    L layers of attention with K and V caches as buffers, updated by index_put,
//              index_put_ (reinplaced), slice_scatter, index_copy_ or llama::update_cache;
//              attention through bmm and _softmax.
//   batchnorm  L batch-norm layers: running_mean / running_var / num_batches_tracked updated
//              through _native_batch_norm_legit_functional and its getitems.
//   counter    N counters incremented every call; outputs read old and new values.
//   rnn        L recurrent layers whose hidden state is a buffer, unrolled over `steps`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/schema.h"

namespace wb::gen {

enum class CacheUpdate {
  IndexPut,          // functional index_put; the mutation value is its result (export)
  IndexPutInplace,   // index_put_ (after reinplace): in-place lineage, no copy needed
  SliceScatter,      // functional slice_scatter along the sequence dimension
  IndexCopyInplace,  // index_copy_ (HF static cache after reinplace)
  UpdateCache,       // llama::update_cache; the mutation value is the cache placeholder
};
std::string_view toString(CacheUpdate update);  // "index_put", "index_put_", ...
std::optional<CacheUpdate> cacheUpdateFromString(std::string_view text);
std::vector<CacheUpdate> allCacheUpdates();

struct ZooOptions {
  int layers = 2;
  // decoder
  int heads = 2;
  int headDim = 2;
  int seqLen = 8;   // cache length
  int tokens = 1;   // new tokens per call
  CacheUpdate cacheUpdate = CacheUpdate::IndexPut;
  // batchnorm
  int batch = 2;
  int channels = 4;
  // counter
  int counters = 1;
  // rnn
  int steps = 3;
  int hidden = 4;
  int inputSize = 3;
};

std::vector<std::string> modelNames();  // "decoder", "batchnorm", "counter", "rnn"

// The model `name` (nullopt for an unknown name). Sizes below 1 are treated as 1.
std::optional<Program> generateModel(std::string_view name, const ZooOptions& options = {});
std::optional<Program> generateModel(std::string_view name, const ZooOptions& options, const SchemaTable& schemas);

}  // namespace wb::gen
