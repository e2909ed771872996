// tests/testing.h: helpers shared by the test executables (paths, loading program files).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

}  // namespace wb::testing
