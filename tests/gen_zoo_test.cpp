// tests/gen_zoo_test.cpp: the model zoo (gen/zoo.h): every model validates, round-trips, has
// the expected buffers and mutation specs for its options, and the checked-in corpus/models
// files still read and validate.
#include <gtest/gtest.h>

#include <string>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "gen/zoo.h"
#include "tests/testing.h"

namespace wb::gen {
namespace {

struct Counts {
  int buffers = 0, parameters = 0, mutations = 0, userOutputs = 0;
};

Counts countsOf(const Program& p) {
  Counts c;
  for (const InputSpec& in : p.signature.inputs) {
    c.buffers += in.kind == InputKind::Buffer;
    c.parameters += in.kind == InputKind::Parameter;
  }
  for (const OutputSpec& out : p.signature.outputs) {
    c.mutations += out.kind == OutputKind::BufferMutation;
    c.userOutputs += out.kind == OutputKind::UserOutput;
  }
  return c;
}

void expectSound(const Program& p, const std::string& what) {
  EXPECT_TRUE(validate(p).empty()) << what << "\n" << formatAll(validate(p)) << writeProgram(p);
  Result<Program> back = readProgram(writeProgram(p));
  ASSERT_TRUE(back.ok()) << what << "\n" << formatAll(back.errors);
  EXPECT_TRUE(*back == p) << what;
  const SchemaTable table = schemasFor(p, builtinSchemas());
  for (const Node& n : p.graph.nodes) {
    if (n.op == NodeOp::CallFunction && n.target != "operator.getitem") {
      EXPECT_NE(table.find(n.target), nullptr) << what << ": " << n.target;
    }
    if (n.op == NodeOp::CallFunction && !n.typeText.empty()) {
      EXPECT_TRUE(n.tensorType() && n.tensorType()->isStatic()) << what << ": " << n.name;
    }
  }
}

TEST(GenZoo, UnknownModel) { EXPECT_FALSE(generateModel("transformer-xl").has_value()); }

TEST(GenZoo, DecoderForEveryCacheUpdate) {
  for (CacheUpdate update : allCacheUpdates()) {
    for (int layers : {1, 3}) {
      ZooOptions o;
      o.layers = layers;
      o.heads = 2;
      o.headDim = 3;
      o.seqLen = 5;
      o.tokens = 2;
      o.cacheUpdate = update;
      const auto p = generateModel("decoder", o);
      ASSERT_TRUE(p.has_value());
      const std::string what = "decoder/" + std::string(toString(update)) + "/L" + std::to_string(layers);
      expectSound(*p, what);
      const Counts c = countsOf(*p);
      EXPECT_EQ(c.buffers, 2 * layers) << what;
      EXPECT_EQ(c.mutations, 2 * layers) << what;
      EXPECT_EQ(c.parameters, 4 * layers) << what;
      EXPECT_EQ(c.userOutputs, 1) << what;
      // The cache update op really is there.
      bool found = false;
      for (const Node& n : p->graph.nodes) {
        const std::string& t = n.target;
        found = found || (update == CacheUpdate::IndexPut && t == "aten::index_put") ||
                (update == CacheUpdate::IndexPutInplace && t == "aten::index_put_") ||
                (update == CacheUpdate::SliceScatter && t == "aten::slice_scatter") ||
                (update == CacheUpdate::IndexCopyInplace && t == "aten::index_copy_") ||
                (update == CacheUpdate::UpdateCache && t == "llama::update_cache");
      }
      EXPECT_TRUE(found) << what;
    }
  }
  EXPECT_EQ(cacheUpdateFromString("slice_scatter"), CacheUpdate::SliceScatter);
  EXPECT_FALSE(cacheUpdateFromString("memcpy").has_value());
}

TEST(GenZoo, DecoderAtScale) {
  ZooOptions o;
  o.layers = 32;
  o.heads = 4;
  o.headDim = 4;
  o.seqLen = 16;
  const auto p = generateModel("decoder", o);
  ASSERT_TRUE(p.has_value());
  expectSound(*p, "decoder/32 layers");
  EXPECT_EQ(countsOf(*p).mutations, 64);
  EXPECT_GT(p->graph.nodes.size(), 32u * 18u);
}

TEST(GenZoo, BatchnormCounterRnn) {
  for (int layers : {1, 4}) {
    ZooOptions o;
    o.layers = layers;
    o.counters = layers;
    const auto bn = generateModel("batchnorm", o);
    ASSERT_TRUE(bn.has_value());
    expectSound(*bn, "batchnorm");
    EXPECT_EQ(countsOf(*bn).buffers, 3 * layers);
    EXPECT_EQ(countsOf(*bn).mutations, 3 * layers);

    const auto counter = generateModel("counter", o);
    ASSERT_TRUE(counter.has_value());
    expectSound(*counter, "counter");
    EXPECT_EQ(countsOf(*counter).buffers, layers);
    EXPECT_EQ(countsOf(*counter).mutations, layers);
    EXPECT_EQ(countsOf(*counter).userOutputs, 2);

    o.steps = 4;
    const auto rnn = generateModel("rnn", o);
    ASSERT_TRUE(rnn.has_value());
    expectSound(*rnn, "rnn");
    EXPECT_EQ(countsOf(*rnn).buffers, layers);
    EXPECT_EQ(countsOf(*rnn).mutations, layers);
  }
}

TEST(GenZoo, CorpusModelsReadAndValidate) {
  const auto files = testing::filesUnder(testing::corpusDir() / "models");
  EXPECT_GE(files.size(), 4u);
  for (const auto& file : files) {
    const Program p = testing::loadProgram(file);
    EXPECT_FALSE(p.signature.inputs.empty()) << file;
  }
}

}  // namespace
}  // namespace wb::gen
