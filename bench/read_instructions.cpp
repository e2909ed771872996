// bench/read_instructions.cpp: the reader and the writer on small programs, in instructions per
// program: what a persistent pass command pays per case on both sides of the pipe (issue 19;
// bench/README.md, "passcmd"). `wbcheck fuzz --pass-cmd CMD --persistent` prints each
// generated program, the C++ adapter reads it, places it and prints the answer, and wbcheck
// reads the answer: two readProgram and two writeProgram calls per case that the built-in
// placement does not make. callgrind counts them the same on every run, where the wall clock of
// this shared VM does not.
//
// Generates PROGRAMS programs (default 500) as `wbcheck fuzz` does (gen::Generator with its
// default options, one seed each), places each with `early`, and prints both: the requests and
// the answers. After a warm-up round, measuredReads() reads every text once and
// measuredWrites() prints every program once:
//   bash bench/read_instructions.sh [BUILD_DIR] [PROGRAMS]
// runs it under callgrind (--toggle-collect on each in turn) and prints the instructions per
// read and per write. Run alone, it prints the programs' mean size.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "gen/generator.h"

namespace wb::bench {

// Not inlined: callgrind collects by function, and these are the ones it is told to collect.
[[gnu::noinline]] std::size_t measuredReads(const std::vector<std::string>& texts) {
  std::size_t nodes = 0;
  for (const std::string& text : texts) {
    const Result<Program> read = readProgram(text, "<pass output>");
    nodes += read ? read->graph.nodes.size() : 0;
  }
  return nodes;
}

[[gnu::noinline]] std::size_t measuredWrites(const std::vector<Program>& programs) {
  std::size_t bytes = 0;
  for (const Program& program : programs) bytes += writeProgram(program).size();
  return bytes;
}

}  // namespace wb::bench

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 500;
  if (count <= 0) {
    std::fprintf(stderr, "usage: %s [PROGRAMS > 0]\n", argv[0]);
    return 2;
  }
  const wb::gen::Generator generator;
  std::vector<wb::Program> programs;
  for (int seed = 1; seed <= count; ++seed) {
    wb::gen::RandomChoices choices(static_cast<std::uint64_t>(seed));
    wb::Program program = generator.generate(choices).program;
    const wb::SchemaTable schemas = wb::schemasFor(program, generator.schemas());
    wb::PlacedProgram placed = wb::place(program, wb::Placement::Early, schemas);
    programs.push_back(std::move(program));
    if (!placed.failure) programs.push_back(std::move(placed.program));
  }
  std::vector<std::string> texts;
  for (const wb::Program& program : programs) texts.push_back(writeProgram(program));
  // The warm-up round: the allocator's caches and the reader's first-call costs, as a
  // persistent adapter has them after its first program.
  for (const std::string& text : texts) (void)wb::readProgram(text, "<pass output>");
  for (const wb::Program& program : programs) (void)wb::writeProgram(program);
  const std::size_t nodes = wb::bench::measuredReads(texts);
  const std::size_t bytes = wb::bench::measuredWrites(programs);
  std::printf("%zu texts (%d programs and their placements by early): %.1f nodes, %.0f bytes each\n", texts.size(),
              count, static_cast<double>(nodes) / static_cast<double>(texts.size()),
              static_cast<double>(bytes) / static_cast<double>(texts.size()));
  return nodes > 0 ? 0 : 1;
}
