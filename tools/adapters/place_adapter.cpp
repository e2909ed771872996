// tools/adapters/place_adapter.cpp: `place_adapter --placement P [--persistent] [--form N]`, a pass command
// (docs/pass-protocol.md) that places with one of wbcheck's own placements, in C++: the adapter
// a pass written in C++ would be, and the tests' proof that `--pass-cmd` finds exactly what the
// built-in placement finds (tests/fuzz_passcmd_test.cpp) and the bench's measure of what the
// protocol costs (bench/passcmd_throughput.sh).
//
// One shot: the program on standard input, the placed program on standard output. Persistent:
// frames of a decimal byte count, a newline and the bytes, in and out, until standard input ends.
// A placement that fails (or a program that does not read) ends the process with status 1 and
// the reason on standard error: a crash, which is how an adapter says it could not place.
//
// `--form N` (1, 2 or 3: core/text.h, ProgramForm) makes it an adapter that understands one
// printed form only, as a pass written against `str(graph)` would be: a program in another form
// is refused (status 1), and the placed program is answered in form N. What `wbcheck
// --pass-form N` is for (tests/passcmd_test.cpp).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "core/placement.h"
#include "core/schema.h"
#include "core/text.h"

namespace {

using namespace wb;

// The first line of `text` that is not blank or a comment: where a printout shows its form.
std::string_view firstLine(std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.empty() && line.front() != '#') return line;
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return {};
}

bool isInForm(std::string_view text, ProgramForm form) {
  const std::string_view first = firstLine(text);
  switch (form) {
    case ProgramForm::ExportedProgram: return first == "ExportedProgram:";
    case ProgramForm::GraphModuleCode: return first.starts_with("def forward(");
    case ProgramForm::StrGraph: return first == "graph():";
  }
  return false;
}

// The placed program's text, or nullopt after a message on standard error.
std::optional<std::string> placeText(std::string_view text, Placement placement, const SchemaTable& builtins,
                                     std::optional<ProgramForm> form) {
  if (form && !isInForm(text, *form)) {
    std::cerr << "place_adapter: this adapter reads form " << static_cast<int>(*form) << " only; the input starts with '"
              << firstLine(text).substr(0, 60) << "'\n";
    return std::nullopt;
  }
  Result<Program> read = readProgram(text, "<stdin>");
  if (!read) {
    std::cerr << formatAll(read.errors);
    return std::nullopt;
  }
  const SchemaTable schemas = schemasFor(*read, builtins);
  PlacedProgram placed = place(std::move(*read.value), placement, schemas);
  if (placed.failure) {
    std::cerr << "place_adapter: the " << toString(placement) << " placement failed: " << *placed.failure << "\n";
    return std::nullopt;
  }
  if (!form) return writeProgram(placed.program);
  if (const std::string why = programFormCannotCarry(placed.program, *form); !why.empty()) {
    std::cerr << "place_adapter: " << why << "\n";
    return std::nullopt;
  }
  return writeProgram(placed.program, *form);
}

bool readExactly(std::FILE* in, std::string& into, std::size_t bytes) {
  into.resize(bytes);
  return std::fread(into.data(), 1, bytes, in) == bytes;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Placement> placement = Placement::Early;
  bool persistent = false;
  std::optional<ProgramForm> form;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--persistent") == 0) {
      persistent = true;
    } else if (std::strcmp(argv[i], "--form") == 0 && i + 1 < argc && std::strlen(argv[i + 1]) == 1 &&
               argv[i + 1][0] >= '1' && argv[i + 1][0] <= '3') {
      form = static_cast<ProgramForm>(argv[++i][0] - '0');
    } else if (std::strcmp(argv[i], "--placement") == 0 && i + 1 < argc) {
      placement = placementFromString(argv[++i]);
      if (!placement) {
        std::cerr << "place_adapter: unknown placement '" << argv[i] << "'\n";
        return 2;
      }
    } else {
      std::cerr << "usage: place_adapter [--placement P] [--persistent] [--form 1|2|3]\n";
      return 2;
    }
  }
  const SchemaTable builtins = builtinSchemas();
  if (!persistent) {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const std::optional<std::string> placed = placeText(text, *placement, builtins, form);
    if (!placed) return 1;
    std::fwrite(placed->data(), 1, placed->size(), stdout);
    return 0;
  }
  std::string program;
  for (;;) {
    char header[32];
    if (!std::fgets(header, sizeof header, stdin)) return 0;  // the end of the requests
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(header, &end, 10);
    if (end == header || *end != '\n' || !readExactly(stdin, program, bytes)) {
      std::cerr << "place_adapter: a request that is not a frame\n";
      return 1;
    }
    const std::optional<std::string> placed = placeText(program, *placement, builtins, form);
    if (!placed) return 1;
    std::fprintf(stdout, "%zu\n", placed->size());
    std::fwrite(placed->data(), 1, placed->size(), stdout);
    std::fflush(stdout);
  }
}
