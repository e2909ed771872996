// tests/testing.h: helpers shared by the test executables (paths, loading program files).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/text.h"
#include "core/validate.h"

namespace wb::testing {

inline std::filesystem::path sourceDir() { return WBCHECK_SOURCE_DIR; }
inline std::filesystem::path corpusDir() { return sourceDir() / "corpus"; }
// The real PyTorch printouts of shared/real-graphs, kept in corpus/real byte for byte (but for
// a line of test code after 07) with SOURCES.md, where each comes from, so that the suite runs
// from any clone of the repository.
inline std::filesystem::path realGraphsDir() { return corpusDir() / "real"; }

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Reads and validates a program file; fails the current test (and returns an empty program)
// if it does not read or validate.
inline Program loadProgram(const std::filesystem::path& path) {
  Result<Program> r = readProgram(readFile(path), path.string());
  EXPECT_TRUE(r.ok()) << formatAll(r.errors);
  if (!r.ok()) return {};
  std::vector<Diagnostic> errors = validate(*r);
  EXPECT_TRUE(errors.empty()) << path << ":\n" << formatAll(errors);
  return *r;
}

// Every regular file below `dir` (recursively) with one of the given extensions, sorted.
inline std::vector<std::filesystem::path> filesUnder(const std::filesystem::path& dir,
                                                     const std::vector<std::string>& extensions = {".txt"}) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    for (const auto& ext : extensions)
      if (entry.path().extension() == ext) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Test builders write a reference as str(graph) prints it, `%x`: ref("x") is the token "%x",
// and resolveRefs() turns every such token into a reference to the (first) node of that name in
// the same graph, wherever it is (a test may build a use before its definition on purpose). A
// name no node has is a test's own mistake (std::invalid_argument), unless `missing` says to
// make it a reference to no node (kNoNode), for the tests of what validate() reports.
enum class MissingName { Throw, NoNode };
inline Arg ref(const std::string& name) { return Arg::token("%" + name); }

inline void resolveRefs(Graph& graph, MissingName missing = MissingName::Throw) {
  std::unordered_map<std::string_view, NodeId> byName;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) byName.emplace(graph.nodes[i].name, static_cast<NodeId>(i));
  auto resolve = [&](Arg& arg, auto& self) -> void {
    if (arg.kind == Arg::Kind::Token && arg.text.starts_with("%")) {
      auto it = byName.find(std::string_view(arg.text).substr(1));
      if (it == byName.end() && missing == MissingName::Throw)
        throw std::invalid_argument("resolveRefs: no node named " + arg.text.substr(1));
      arg = Arg::ref(it == byName.end() ? kNoNode : it->second);
    }
    for (Arg& item : arg.items) self(item, self);
  };
  for (Node& node : graph.nodes) {
    for (Arg& a : node.args) resolve(a, resolve);
    for (auto& kv : node.kwargs) resolve(kv.second, resolve);
  }
}

inline void resolveRefs(Program& program, MissingName missing = MissingName::Throw) {
  resolveRefs(program.graph, missing);
  for (Submodule& sub : program.submodules) resolveRefs(sub.graph, missing);
}

// A reference to the node of `graph` named `name`, to compare arguments with (ADD_FAILURE if none).
inline Arg refTo(const Graph& graph, std::string_view name) {
  const std::optional<std::size_t> at = graph.indexOf(name);
  if (!at) ADD_FAILURE() << "no node named " << name;
  return Arg::ref(at ? static_cast<NodeId>(*at) : kNoNode);
}

// The name of the node a reference of `graph` refers to ("<no node>" for none).
inline std::string nameOf(const Graph& graph, const Arg& arg) {
  return arg.isRef() && arg.node < graph.nodes.size() ? graph.nodes[arg.node].name : std::string("<no node>");
}

}  // namespace wb::testing
