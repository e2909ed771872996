// tests/builder.h: programs built in C++ for the tests that need one shape per rule (the alias
// analysis, the placement models): placeholders, nodes, then the returned values with their
// specs. Programs the suite shares are files in corpus/ instead.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "tests/testing.h"

namespace wb::testing {

// A reference to the node named `name`, resolved when the program is returned.
inline Arg R(const std::string& name) { return ref(name); }
inline Arg I(std::int64_t v) { return Arg::ofInt(v); }
inline Arg L(std::vector<Arg> items) { return Arg::list(std::move(items)); }

// A returned value and its output spec.
struct Out {
  std::string value;
  OutputKind kind = OutputKind::UserOutput;
  std::string target;
};
inline Out userOut(std::string value) { return {std::move(value), OutputKind::UserOutput, ""}; }
inline Out bufferMut(std::string value, std::string fqn) {
  return {std::move(value), OutputKind::BufferMutation, std::move(fqn)};
}
inline Out inputMut(std::string value, std::string input) {
  return {std::move(value), OutputKind::UserInputMutation, std::move(input)};
}

struct Builder {
  Program program;

  Builder& buffer(const std::string& name, const std::string& fqn, const std::string& type = "f32[4]") {
    return placeholder(name, type, {InputKind::Buffer, name, fqn, true});
  }
  Builder& input(const std::string& name, const std::string& type = "f32[4]") {
    return placeholder(name, type, {InputKind::UserInput, name, "", std::nullopt});
  }
  Builder& placeholder(const std::string& name, const std::string& type, InputSpec spec) {
    program.graph.nodes.push_back(Node::placeholder(name, type));
    program.signature.inputs.push_back(std::move(spec));
    return *this;
  }
  Builder& getAttr(const std::string& name) {
    program.graph.nodes.push_back(Node::getAttr(name));
    return *this;
  }
  // A call_function node; `type` is its annotation ("" for none).
  Builder& call(const std::string& name, const std::string& target, std::vector<Arg> args,
                const std::string& type = "f32[4]", NodeMeta meta = {}) {
    program.graph.nodes.push_back(Node::call(name, target, std::move(args), {}, type, std::move(meta)));
    return *this;
  }
  // The same with keyword arguments (`out=`), without an annotation.
  Builder& callWithKwargs(const std::string& name, const std::string& target, std::vector<Arg> args,
                          std::vector<std::pair<std::string, Arg>> kwargs) {
    program.graph.nodes.push_back(Node::call(name, target, std::move(args), std::move(kwargs), {}, {}));
    return *this;
  }
  Builder& getitem(const std::string& name, const std::string& of, std::int64_t index) {
    return call(name, "operator.getitem", {R(of), I(index)});
  }
  // A call_module node (a submodule: schema-less).
  Builder& module(const std::string& name, std::vector<Arg> args) {
    call(name, "sub_mod", std::move(args), "");
    program.graph.nodes.back().op = NodeOp::CallModule;
    return *this;
  }
  Builder& schema(const std::string& text) {
    program.schemas.push_back(text);
    return *this;
  }
  // The output node returning `outs`, with their specs.
  Program returns(const std::vector<Out>& outs) {
    Node output;
    output.name = "output";
    output.op = NodeOp::Output;
    output.target = "output";
    std::vector<Arg> values;
    for (const Out& o : outs) {
      values.push_back(R(o.value));
      program.signature.outputs.push_back({o.kind, o.value, o.target});
    }
    output.args = {Arg::tuple(std::move(values))};
    program.graph.nodes.push_back(std::move(output));
    resolveRefs(program);
    return program;
  }
  // Returns every listed value as a user output.
  Program done(const std::vector<std::string>& returned) {
    std::vector<Out> outs;
    for (const std::string& value : returned) outs.push_back(userOut(value));
    return returns(outs);
  }
};

}  // namespace wb::testing
