// gen/scaled.cpp: the chain and decoder shapes (see scaled.h).
#include "gen/scaled.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wb::gen {

namespace {

class ScaledBuilder {
 public:
  // `type`: the annotation of every tensor but those given one of their own.
  ScaledBuilder(std::size_t reserve, const char* type) : type_(type) { p_.graph.nodes.reserve(reserve + 8); }

  void buffer(const std::string& name, const std::string& fqn) {
    placeholder(name, type_);
    p_.signature.inputs.push_back({InputKind::Buffer, name, fqn, true});
  }
  void input(const std::string& name, const char* type = nullptr) {
    placeholder(name, type ? type : type_);
    p_.signature.inputs.push_back({InputKind::UserInput, name, "", std::nullopt});
  }
  void call(std::string name, const char* target, std::vector<Arg> args) {
    Node n;
    n.name = std::move(name);
    n.target = targets_(target);  // one block per op, as the text reader gives
    n.args = std::move(args);
    n.typeText = type_;
    define(std::move(n));
  }
  void mutation(const std::string& value, const std::string& fqn) {
    returned_.push_back(R(value));
    p_.signature.outputs.push_back({OutputKind::BufferMutation, value, fqn});
  }
  void userOutput(const std::string& value) {
    userReturned_.push_back(R(value));
    userSpecs_.push_back({OutputKind::UserOutput, value, ""});
  }
  std::size_t size() const { return p_.graph.nodes.size(); }
  // A reference to the node defined as `name` (placeholders come first: the indices are final).
  Arg R(const std::string& name) const { return Arg::ref(static_cast<NodeId>(definedAt_.at(name))); }
  Program finish() {
    Node out;
    out.name = "output";
    out.op = NodeOp::Output;
    out.target = "output";
    for (Arg& a : userReturned_) returned_.push_back(std::move(a));
    for (OutputSpec& s : userSpecs_) p_.signature.outputs.push_back(std::move(s));
    out.args = {Arg::tuple(std::move(returned_))};
    p_.graph.nodes.push_back(std::move(out));
    return std::move(p_);
  }

 private:
  void placeholder(const std::string& name, const char* type) {
    Node n;
    n.name = name;
    n.op = NodeOp::Placeholder;
    n.target = name;
    n.typeText = type;
    define(std::move(n));
  }
  void define(Node n) {
    definedAt_.emplace(n.name, p_.graph.nodes.size());
    p_.graph.nodes.push_back(std::move(n));
  }
  const char* type_;
  Program p_;
  std::unordered_map<std::string, std::size_t> definedAt_;
  TargetInterner targets_;
  std::vector<Arg> returned_, userReturned_;
  std::vector<OutputSpec> userSpecs_;
};

Arg I(std::int64_t v) { return Arg::ofInt(v); }

}  // namespace

// N nodes, B buffers: per buffer, `old = add(b_i, h)` reads the old contents, then a run of
// mul/add/relu_ computes the new value, which becomes b_i's mutation value.
Program chainProgram(std::size_t nodes, std::size_t buffers) {
  ScaledBuilder b(nodes, "f32[4]");
  for (std::size_t i = 0; i < buffers; ++i) b.buffer("b_" + std::to_string(i), "buf" + std::to_string(i));
  b.input("x");
  const std::size_t body = nodes > buffers + 2 ? nodes - buffers - 2 : buffers;
  const std::size_t perBuffer = std::max<std::size_t>(2, body / buffers);
  std::string h = "x";
  std::size_t id = 0;
  auto fresh = [&]() { return "n" + std::to_string(id++); };
  for (std::size_t i = 0; i < buffers; ++i) {
    std::string old = fresh();
    b.call(old, "aten::add.Tensor", {b.R("b_" + std::to_string(i)), b.R(h)});
    std::string v = old;
    for (std::size_t j = 1; j < perBuffer; ++j) {
      std::string next = fresh();
      if (j % 7 == 3)
        b.call(next, "aten::relu_", {b.R(v)});  // in place on the value: R3
      else
        b.call(next, j % 2 ? "aten::mul.Tensor" : "aten::add.Tensor", {b.R(v), b.R(h)});
      v = next;
    }
    b.mutation(v, "buf" + std::to_string(i));
    h = v;
  }
  b.userOutput(h);
  return b.finish();
}

// L = B/2 layers with K/V caches: index_put (functional) produces each cache's new value;
// slice_copy views of the old caches are read by the attention; fillers pad to N nodes.
Program decoderProgram(std::size_t nodes, std::size_t buffers) {
  const std::size_t layers = std::max<std::size_t>(1, buffers / 2);
  ScaledBuilder b(nodes, "f32[4, 4]");  // matrices: q, k and v are products (mm)
  for (std::size_t l = 0; l < layers; ++l) {
    b.buffer("b_k_" + std::to_string(l), "layers." + std::to_string(l) + ".k_cache");
    b.buffer("b_v_" + std::to_string(l), "layers." + std::to_string(l) + ".v_cache");
  }
  b.input("w");
  b.input("pos", "i64[4]");
  b.input("x");
  std::string h = "x";
  std::size_t id = 0;
  auto fresh = [&]() { return "n" + std::to_string(id++); };
  const std::size_t perLayer = std::max<std::size_t>(10, (nodes - 2 * layers - 4) / layers);
  for (std::size_t l = 0; l < layers; ++l) {
    const std::string bk = "b_k_" + std::to_string(l), bv = "b_v_" + std::to_string(l);
    std::string q = fresh(), k = fresh(), v = fresh();
    b.call(q, "aten::mm", {b.R(h), b.R("w")});
    b.call(k, "aten::mm", {b.R(h), b.R("w")});
    b.call(v, "aten::mm", {b.R(h), b.R("w")});
    std::string kc = fresh(), vc = fresh();
    b.call(kc, "aten::index_put", {b.R(bk), Arg::list({b.R("pos")}), b.R(k)});
    b.call(vc, "aten::index_put", {b.R(bv), Arg::list({b.R("pos")}), b.R(v)});
    std::string ks = fresh(), vs = fresh();
    b.call(ks, "aten::slice_copy.Tensor", {b.R(bk), I(0), I(0), I(4)});
    b.call(vs, "aten::slice_copy.Tensor", {b.R(bv), I(0), I(0), I(4)});
    std::string att = fresh();
    b.call(att, "aten::scaled_dot_product_attention", {b.R(q), b.R(ks), b.R(vs)});
    std::string out = fresh();
    b.call(out, "aten::add.Tensor", {b.R(h), b.R(att)});
    h = out;
    for (std::size_t j = 10; j < perLayer; ++j) {
      std::string next = fresh();
      b.call(next, j % 3 ? "aten::mul.Tensor" : "aten::silu", j % 3 ? std::vector<Arg>{b.R(h), b.R(h)} : std::vector<Arg>{b.R(h)});
      h = next;
    }
    b.mutation(kc, "layers." + std::to_string(l) + ".k_cache");
    b.mutation(vc, "layers." + std::to_string(l) + ".v_cache");
  }
  b.userOutput(h);
  return b.finish();
}

std::vector<std::string> placementLayout(const Program& program) {
  const Graph& g = program.graph;
  auto label = [&](const Node& n) {
    if (n.target != "aten::copy_" || n.args.size() != 2 || !n.args[0].isRef() || !n.args[1].isRef()) return n.name;
    return "copy(" + g.nodes[n.args[0].node].name + "<-" + g.nodes[n.args[1].node].name + ")";
  };
  std::vector<std::string> out;
  for (const Node& n : g.nodes)
    if (!n.isOutput()) out.push_back(label(n));
  for (const Arg& a : g.returnedValues()) out.push_back("return " + (a.isRef() ? label(g.nodes[a.node]) : "?"));
  return out;
}

}  // namespace wb::gen
