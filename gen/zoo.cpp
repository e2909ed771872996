// gen/zoo.cpp: realistic stateful models (decoder, batchnorm, counter, rnn) at any size.
#include "gen/zoo.h"

#include <algorithm>

#include "gen/program_builder.h"

namespace wb::gen {

std::string_view toString(CacheUpdate update) {
  switch (update) {
    case CacheUpdate::IndexPut: return "index_put";
    case CacheUpdate::IndexPutInplace: return "index_put_";
    case CacheUpdate::SliceScatter: return "slice_scatter";
    case CacheUpdate::IndexCopyInplace: return "index_copy_";
    case CacheUpdate::UpdateCache: return "update_cache";
  }
  return "index_put";
}

std::vector<CacheUpdate> allCacheUpdates() {
  return {CacheUpdate::IndexPut, CacheUpdate::IndexPutInplace, CacheUpdate::SliceScatter,
          CacheUpdate::IndexCopyInplace, CacheUpdate::UpdateCache};
}

std::optional<CacheUpdate> cacheUpdateFromString(std::string_view text) {
  for (CacheUpdate u : allCacheUpdates())
    if (toString(u) == text) return u;
  return std::nullopt;
}

std::vector<std::string> modelNames() { return {"decoder", "batchnorm", "counter", "rnn"}; }

namespace {

std::int64_t atLeastOne(int v) { return std::max(1, v); }

Program decoder(const ZooOptions& o, const SchemaTable& schemas) {
  ProgramBuilder pb(schemas);
  const std::int64_t layers = atLeastOne(o.layers), heads = atLeastOne(o.heads), headDim = atLeastOne(o.headDim);
  const std::int64_t seq = atLeastOne(o.seqLen), tokens = std::min(atLeastOne(o.tokens), seq);
  const std::int64_t model = heads * headDim;
  // index_put on dim 0 needs the sequence first; the other updates write along dim 1 of a
  // [1, S, H, Dh] cache (llama::update_cache's layout).
  const bool seqFirst = o.cacheUpdate == CacheUpdate::IndexPut || o.cacheUpdate == CacheUpdate::IndexPutInplace;
  const std::vector<std::int64_t> cacheDims = seqFirst ? std::vector<std::int64_t>{seq, heads, headDim}
                                                       : std::vector<std::int64_t>{1, seq, heads, headDim};
  const std::vector<std::int64_t> newDims = seqFirst ? std::vector<std::int64_t>{tokens, heads, headDim}
                                                     : std::vector<std::int64_t>{1, tokens, heads, headDim};
  const TensorType weight = tensorType("f32", {model, model});
  struct Layer {
    std::string wq, wk, wv, wo, kCache, vCache;
  };
  std::vector<Layer> ls(static_cast<std::size_t>(layers));
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string prefix = "layers." + std::to_string(l) + ".attention.";
    Layer& L = ls[static_cast<std::size_t>(l)];
    L.wq = pb.parameter(prefix + "wq.weight", weight);
    L.wk = pb.parameter(prefix + "wk.weight", weight);
    L.wv = pb.parameter(prefix + "wv.weight", weight);
    L.wo = pb.parameter(prefix + "wo.weight", weight);
  }
  std::vector<std::pair<std::string, std::string>> caches;  // (fqn, placeholder)
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string prefix = "layers." + std::to_string(l) + ".attention.";
    Layer& L = ls[static_cast<std::size_t>(l)];
    L.kCache = pb.buffer(prefix + "k_cache", tensorType("f32", cacheDims));
    caches.emplace_back(prefix + "k_cache", L.kCache);
    L.vCache = pb.buffer(prefix + "v_cache", tensorType("f32", cacheDims));
    caches.emplace_back(prefix + "v_cache", L.vCache);
  }
  std::string h = pb.userInput("x", tensorType("f32", {tokens, model}));
  const std::string inputPos = pb.userInput("input_pos", tensorType("i64", {tokens}));

  const TensorType cacheType = tensorType("f32", cacheDims);
  const TensorType tokenType = tensorType("f32", {tokens, model});
  std::vector<std::string> mutationValues;
  // Writes `fresh` into `cache`; returns (the value later reads use, the mutation value).
  auto update = [&](const std::string& cache, const std::string& fresh) -> std::pair<std::string, std::string> {
    switch (o.cacheUpdate) {
      case CacheUpdate::IndexPut: {
        std::string n = pb.call("aten::index_put", {pb.ref(cache), pb.refList({inputPos}), pb.ref(fresh)}, {}, cacheType);
        return {n, n};
      }
      case CacheUpdate::IndexPutInplace: {
        std::string n = pb.call("aten::index_put_", {pb.ref(cache), pb.refList({inputPos}), pb.ref(fresh)}, {}, cacheType);
        return {n, n};
      }
      case CacheUpdate::SliceScatter: {
        std::string n = pb.call("aten::slice_scatter",
                                {pb.ref(cache), pb.ref(fresh), Arg::ofInt(1), Arg::ofInt(0), Arg::ofInt(tokens)}, {}, cacheType);
        return {n, n};
      }
      case CacheUpdate::IndexCopyInplace: {
        std::string n = pb.call("aten::index_copy_", {pb.ref(cache), Arg::ofInt(1), pb.ref(inputPos), pb.ref(fresh)}, {}, cacheType);
        return {n, n};
      }
      case CacheUpdate::UpdateCache:
        pb.call("llama::update_cache", {pb.ref(fresh), pb.ref(cache), Arg::ofInt(0)}, {}, tensorType("f32", {1}));
        return {cache, cache};
    }
    return {cache, cache};
  };
  auto f32 = [](std::vector<std::int64_t> dims) { return tensorType("f32", dims); };
  for (const Layer& L : ls) {
    const std::string q = pb.call("aten::mm", {pb.ref(h), pb.ref(L.wq)}, {}, tokenType);
    const std::string k = pb.call("aten::mm", {pb.ref(h), pb.ref(L.wk)}, {}, tokenType);
    const std::string v = pb.call("aten::mm", {pb.ref(h), pb.ref(L.wv)}, {}, tokenType);
    const std::string kNew = pb.call("aten::view_copy", {pb.ref(k), intList(newDims)}, {}, f32(newDims));
    const std::string vNew = pb.call("aten::view_copy", {pb.ref(v), intList(newDims)}, {}, f32(newDims));
    auto [kRead, kValue] = update(L.kCache, kNew);
    auto [vRead, vValue] = update(L.vCache, vNew);
    mutationValues.push_back(kValue);
    mutationValues.push_back(vValue);
    if (!seqFirst) {
      kRead = pb.call("aten::view_copy", {pb.ref(kRead), intList({seq, heads, headDim})}, {}, f32({seq, heads, headDim}));
      vRead = pb.call("aten::view_copy", {pb.ref(vRead), intList({seq, heads, headDim})}, {}, f32({seq, heads, headDim}));
    }
    const std::string q3 = pb.call("aten::view_copy", {pb.ref(q), intList({tokens, heads, headDim})}, {}, f32({tokens, heads, headDim}));
    const std::string qh = pb.call("aten::permute_copy", {pb.ref(q3), intList({1, 0, 2})}, {}, f32({heads, tokens, headDim}));
    const std::string kt = pb.call("aten::permute_copy", {pb.ref(kRead), intList({1, 2, 0})}, {}, f32({heads, headDim, seq}));
    const std::string scores = pb.call("aten::bmm", {pb.ref(qh), pb.ref(kt)}, {}, f32({heads, tokens, seq}));
    const std::string scaled = pb.call("aten::mul.Tensor", {pb.ref(scores), Arg::ofFloat(0.5)}, {}, f32({heads, tokens, seq}));
    const std::string attn = pb.call("aten::_softmax", {pb.ref(scaled), Arg::ofInt(-1), Arg::ofBool(false)}, {}, f32({heads, tokens, seq}));
    const std::string vh = pb.call("aten::permute_copy", {pb.ref(vRead), intList({1, 0, 2})}, {}, f32({heads, seq, headDim}));
    const std::string ctx = pb.call("aten::bmm", {pb.ref(attn), pb.ref(vh)}, {}, f32({heads, tokens, headDim}));
    const std::string ctxT = pb.call("aten::permute_copy", {pb.ref(ctx), intList({1, 0, 2})}, {}, f32({tokens, heads, headDim}));
    const std::string ctx2 = pb.call("aten::view_copy", {pb.ref(ctxT), intList({tokens, model})}, {}, tokenType);
    const std::string out = pb.call("aten::mm", {pb.ref(ctx2), pb.ref(L.wo)}, {}, tokenType);
    h = pb.call("aten::add.Tensor", {pb.ref(h), pb.ref(out)}, {}, tokenType);
  }
  for (std::size_t i = 0; i < caches.size(); ++i)
    pb.output(OutputKind::BufferMutation, mutationValues[i], caches[i].first);
  pb.output(OutputKind::UserOutput, h);
  return pb.finish();
}

Program batchnorm(const ZooOptions& o, const SchemaTable& schemas) {
  ProgramBuilder pb(schemas);
  const std::int64_t layers = atLeastOne(o.layers), batch = atLeastOne(o.batch), channels = atLeastOne(o.channels);
  const TensorType perChannel = tensorType("f32", {channels});
  const TensorType act = tensorType("f32", {batch, channels});
  struct Layer {
    std::string prefix, weight, bias, mean, var, tracked;
  };
  std::vector<Layer> ls(static_cast<std::size_t>(layers));
  for (std::int64_t l = 0; l < layers; ++l) {
    Layer& L = ls[static_cast<std::size_t>(l)];
    L.prefix = "bn" + std::to_string(l) + ".";
    L.weight = pb.parameter(L.prefix + "weight", perChannel);
    L.bias = pb.parameter(L.prefix + "bias", perChannel);
  }
  for (Layer& L : ls) {
    L.mean = pb.buffer(L.prefix + "running_mean", perChannel);
    L.var = pb.buffer(L.prefix + "running_var", perChannel);
    L.tracked = pb.buffer(L.prefix + "num_batches_tracked", tensorType("i64", {}));
  }
  std::string h = pb.userInput("x", act);
  std::vector<std::pair<std::string, std::string>> mutations;  // (fqn, value)
  for (const Layer& L : ls) {
    const std::string add = pb.call("aten::add.Tensor", {pb.ref(L.tracked), Arg::ofInt(1)}, {}, tensorType("i64", {}));
    const std::string bn = pb.call("aten::_native_batch_norm_legit_functional",
                                   {pb.ref(h), pb.ref(L.weight), pb.ref(L.bias), pb.ref(L.mean), pb.ref(L.var),
                                    Arg::ofBool(true), Arg::ofFloat(0.1), Arg::ofFloat(1e-05)});
    const std::string out = pb.getitem(bn, 0, act);
    const std::string mean = pb.getitem(bn, 3, perChannel);
    const std::string var = pb.getitem(bn, 4, perChannel);
    h = pb.call("aten::relu", {pb.ref(out)}, {}, act);
    mutations.emplace_back(L.prefix + "running_mean", mean);
    mutations.emplace_back(L.prefix + "running_var", var);
    mutations.emplace_back(L.prefix + "num_batches_tracked", add);
  }
  for (const auto& [fqn, value] : mutations) pb.output(OutputKind::BufferMutation, value, fqn);
  pb.output(OutputKind::UserOutput, h);
  return pb.finish();
}

Program counter(const ZooOptions& o, const SchemaTable& schemas) {
  ProgramBuilder pb(schemas);
  const std::int64_t counters = atLeastOne(o.counters);
  const TensorType scalar = tensorType("i64", {});
  std::vector<std::string> buffers, fqns;
  for (std::int64_t i = 0; i < counters; ++i) {
    fqns.push_back(counters == 1 ? "count" : "count" + std::to_string(i));
    buffers.push_back(pb.buffer(fqns.back(), scalar));
  }
  const TensorType vec = tensorType("i64", {4});
  const std::string x = pb.userInput("x", vec);
  std::vector<std::string> next;
  for (const auto& b : buffers) next.push_back(pb.call("aten::add.Tensor", {pb.ref(b), Arg::ofInt(1)}, {}, scalar));
  // One output reads the old count (after the update was computed: the copy must wait for it),
  // one the new count.
  const std::string old = pb.call("aten::add.Tensor", {pb.ref(x), pb.ref(buffers.front())}, {}, vec);
  const std::string fresh = pb.call("aten::mul.Tensor", {pb.ref(x), pb.ref(next.front())}, {}, vec);
  for (std::size_t i = 0; i < buffers.size(); ++i) pb.output(OutputKind::BufferMutation, next[i], fqns[i]);
  pb.output(OutputKind::UserOutput, old);
  pb.output(OutputKind::UserOutput, fresh);
  return pb.finish();
}

Program rnn(const ZooOptions& o, const SchemaTable& schemas) {
  ProgramBuilder pb(schemas);
  const std::int64_t layers = atLeastOne(o.layers), steps = atLeastOne(o.steps), hidden = atLeastOne(o.hidden),
                     inputSize = atLeastOne(o.inputSize);
  const TensorType state = tensorType("f32", {1, hidden});
  std::vector<std::string> wih, whh, hs, fqns;
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string prefix = "layers." + std::to_string(l) + ".";
    wih.push_back(pb.parameter(prefix + "weight_ih", tensorType("f32", {l == 0 ? inputSize : hidden, hidden})));
    whh.push_back(pb.parameter(prefix + "weight_hh", tensorType("f32", {hidden, hidden})));
  }
  for (std::int64_t l = 0; l < layers; ++l) {
    fqns.push_back("layers." + std::to_string(l) + ".h");
    hs.push_back(pb.buffer(fqns.back(), state));
  }
  const std::string x = pb.userInput("x", tensorType("f32", {steps, inputSize}));
  std::vector<std::string> inputs;
  for (std::int64_t t = 0; t < steps; ++t)
    inputs.push_back(pb.call("aten::slice_copy.Tensor", {pb.ref(x), Arg::ofInt(0), Arg::ofInt(t), Arg::ofInt(t + 1)}, {},
                             tensorType("f32", {1, inputSize})));
  for (std::int64_t l = 0; l < layers; ++l) {
    std::string h = hs[static_cast<std::size_t>(l)];
    std::vector<std::string> outs;
    for (const std::string& in : inputs) {
      const std::string a = pb.call("aten::mm", {pb.ref(in), pb.ref(wih[static_cast<std::size_t>(l)])}, {}, state);
      const std::string b = pb.call("aten::mm", {pb.ref(h), pb.ref(whh[static_cast<std::size_t>(l)])}, {}, state);
      const std::string s = pb.call("aten::add.Tensor", {pb.ref(a), pb.ref(b)}, {}, state);
      h = pb.call("aten::tanh", {pb.ref(s)}, {}, state);
      outs.push_back(h);
    }
    inputs = outs;
  }
  // The final hidden state of each layer is the last output of that layer.
  std::vector<std::string> finals;
  {
    // Recompute which node ended each layer: the last tanh per layer, in order.
    std::vector<std::string> tanhs;
    for (const Node& n : pb.body())
      if (n.target == "aten::tanh") tanhs.push_back(n.name);
    for (std::int64_t l = 0; l < layers; ++l) finals.push_back(tanhs[static_cast<std::size_t>((l + 1) * steps - 1)]);
  }
  const std::string all = pb.call("aten::cat", {pb.refList(inputs), Arg::ofInt(0)}, {}, tensorType("f32", {steps, hidden}));
  for (std::size_t l = 0; l < finals.size(); ++l) pb.output(OutputKind::BufferMutation, finals[l], fqns[l]);
  pb.output(OutputKind::UserOutput, all);
  return pb.finish();
}

}  // namespace

std::optional<Program> generateModel(std::string_view name, const ZooOptions& options, const SchemaTable& schemas) {
  if (name == "decoder") return decoder(options, schemas);
  if (name == "batchnorm") return batchnorm(options, schemas);
  if (name == "counter") return counter(options, schemas);
  if (name == "rnn") return rnn(options, schemas);
  return std::nullopt;
}

std::optional<Program> generateModel(std::string_view name, const ZooOptions& options) {
  return generateModel(name, options, builtinSchemas());
}

}  // namespace wb::gen
