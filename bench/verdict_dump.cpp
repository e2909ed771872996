// bench/verdict_dump.cpp: every verdict the oracle gives on a fixed set of programs, as text,
// so that a change meant only to be faster can be shown to change no result: run it at the
// old commit and at the new one and compare the two outputs byte for byte.
//
//   build-release/bench/verdict_dump corpus > before.txt      (at the old commit)
//   build-release/bench/verdict_dump corpus > after.txt       (at the new one)
//   cmp before.txt after.txt
//
// Per program of CORPUS_DIR (every *.txt, recursively, in name order) and per placement: the
// report of a fresh check(), the report of a shared Checker's check with other options, and
// the placed program with its copies, skipped write-backs and failure. Then, per placement and
// generator size, --generated campaign cases (campaign::runCase, as `wbcheck fuzz` makes them) with
// their reports, and for every eighth case a fresh check and both place() overloads. Paths
// are printed as given, so run both commits with the same CORPUS_DIR argument.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/text.h"
#include "core/validate.h"
#include "campaign/campaign.h"
#include "gen/generator.h"
#include "oracle/oracle.h"

namespace {

using namespace wb;

void printPlaced(std::ostream& out, const PlacedProgram& placed) {
  out << "--- placed\n" << writeProgram(placed.program);
  for (const CopyExplanation& c : placed.copies)
    out << "copy " << c.copyNode << " " << c.buffer << " " << c.value << " " << toString(c.rule) << " " << c.bindingNode << " "
        << c.text << "\n";
  for (const std::string& s : placed.skipped) out << "skipped " << s << "\n";
  if (placed.failure) out << "failure " << *placed.failure << "\n";
}

void dumpCorpus(std::ostream& out, const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  oracle::Checker shared;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    out << "=== " << file << "\n";
    Result<Program> program = readProgram(text.str(), file);
    if (!program.ok()) {
      out << "unreadable\n";
      continue;
    }
    if (!validate(*program).empty()) {
      out << "invalid\n";
      continue;
    }
    const SchemaTable schemas = schemasFor(*program, builtinSchemas());
    for (Placement p : allPlacements()) {
      oracle::CheckOptions options;
      options.placement = p;
      options.fileName = file;
      out << "## " << toString(p) << "\n" << oracle::formatReport(oracle::check(*program, options, schemas));
      options.inputs = 2;
      options.seed = 7;
      out << oracle::formatReport(shared.check(*program, options, schemas));
      printPlaced(out, place(*program, p, schemas));
    }
  }
}

void dumpGenerated(std::ostream& out, int count) {
  for (Placement p : allPlacements())
    for (int nodes : {10, 30}) {
      campaign::CampaignOptions campaign;
      campaign.placement = p;
      campaign.maxNodes = nodes;
      campaign.inputs = 2;
      const gen::Generator generator(campaign::campaignGenOptions(campaign));
      oracle::Checker checker;
      for (int i = 0; i < count; ++i) {
        const std::uint64_t seed = campaign::caseSeed(11, 0, static_cast<std::uint64_t>(i));
        const campaign::CaseResult result = campaign::runCase(seed, campaign, generator, checker);
        out << "=== gen " << toString(p) << " " << nodes << " " << i << "\n" << oracle::formatReport(result.report);
        if (i % 8 != 0) continue;
        const SchemaTable schemas = schemasFor(result.program, generator.schemas());
        oracle::CheckOptions options;
        options.placement = p;
        options.inputs = 2;
        options.seed = seed;
        out << oracle::formatReport(oracle::check(result.program, options, schemas));
        printPlaced(out, place(result.program, p, schemas));
        printPlaced(out, place(Program(result.program), p, schemas));
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Every verdict on the corpus and on generated programs, to compare two commits"};
  std::string corpus;
  int generated = 3000;
  app.add_option("corpus", corpus, "directory of program files (*.txt, recursively)")->required()->check(CLI::ExistingDirectory);
  app.add_option("--generated", generated, "campaign cases per placement and size")->check(CLI::Range(0, 1000000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::ios::sync_with_stdio(false);
  dumpCorpus(std::cout, corpus);
  dumpGenerated(std::cout, generated);
  return std::cout.good() ? 0 : 2;
}
