// tests/testing.h: helpers shared by the test executables (paths, loading program files).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/validate.h"

namespace wb::testing {

inline std::filesystem::path sourceDir() { return WBCHECK_SOURCE_DIR; }
inline std::filesystem::path corpusDir() { return sourceDir() / "corpus"; }
// The real PyTorch printouts of shared/real-graphs, kept byte for byte in corpus/real (with
// SOURCES.md, where each comes from), so that the suite runs from any clone of the repository.
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

// `p` with every reference's definition hint (Arg::definitionHint) set to hintOf(the index of
// the node it names, or -1): right (the identity), missing, stale or out of range, to show that
// a consumer's results do not depend on them.
template <typename F>
Program withDefinitionHints(Program p, F hintOf) {
  const Graph original = p.graph;
  auto rehint = [&](Arg& arg, auto& self) -> void {
    if (arg.isRef()) {
      const std::optional<std::size_t> at = original.indexOf(arg.text);
      arg.setDefinitionHint(hintOf(at ? static_cast<std::int64_t>(*at) : -1));
    }
    for (Arg& item : arg.items) self(item, self);
  };
  for (Node& node : p.graph.nodes) {
    for (Arg& a : node.args) rehint(a, rehint);
    for (auto& kv : node.kwargs) rehint(kv.second, rehint);
  }
  return p;
}

// Expects every reference in `p` to carry the index of its definition as its hint
// (Arg::definitionHint), as the reader, the generators and a copied placement give them.
// Returns the number of references checked.
inline std::size_t expectReferencesHintTheirDefinitions(const Program& p, const std::string& context = {}) {
  std::size_t refs = 0;
  auto check = [&](const Arg& a, auto& self) -> void {
    if (a.isRef()) {
      ++refs;
      const std::optional<std::size_t> at = p.graph.indexOf(a.text);
      EXPECT_TRUE(at.has_value()) << context << ": " << a.text;
      if (at) {
        EXPECT_EQ(a.definitionHint(), static_cast<std::int64_t>(*at)) << context << ": " << a.text;
      }
    }
    for (const Arg& item : a.items) self(item, self);
  };
  for (const Node& node : p.graph.nodes) {
    for (const Arg& a : node.args) check(a, check);
    for (const auto& kv : node.kwargs) check(kv.second, check);
  }
  return refs;
}

// Hints that are no use, for withDefinitionHints on a program of `nodes` nodes: none, node 0,
// the next node (maybe the user itself, or a later one), the mirror image, past the graph.
inline std::vector<std::function<std::int64_t(std::int64_t)>> uselessDefinitionHints(std::int64_t nodes) {
  return {
      [](std::int64_t) { return Arg::kNoDefinitionHint; },
      [](std::int64_t) { return std::int64_t{0}; },
      [](std::int64_t at) { return at + 1; },
      [nodes](std::int64_t at) { return nodes - 1 - at; },
      [nodes](std::int64_t) { return nodes; },
      [](std::int64_t) { return std::int64_t{1} << 40; },
  };
}

}  // namespace wb::testing
