// tools/adapters/place_adapter.cpp: `place_adapter --placement P [--persistent]`, a pass command
// (docs/pass-protocol.md) that places with one of wbcheck's own placements, in C++: the adapter
// a pass written in C++ would be, and the tests' proof that `--pass-cmd` finds exactly what the
// built-in placement finds (tests/fuzz_passcmd_test.cpp) and the bench's measure of what the
// protocol costs (bench/passcmd_throughput.sh).
//
// One shot: the program on standard input, the placed program on standard output. Persistent:
// frames of a decimal byte count, a newline and the bytes, in and out, until standard input ends.
// A placement that fails (or a program that does not read) ends the process with status 1 and
// the reason on standard error: a crash, which is how an adapter says it could not place.
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

// The placed program's text, or nullopt after a message on standard error.
std::optional<std::string> placeText(std::string_view text, Placement placement, const SchemaTable& builtins) {
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
  return writeProgram(placed.program);
}

bool readExactly(std::FILE* in, std::string& into, std::size_t bytes) {
  into.resize(bytes);
  return std::fread(into.data(), 1, bytes, in) == bytes;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Placement> placement = Placement::Early;
  bool persistent = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--persistent") == 0) {
      persistent = true;
    } else if (std::strcmp(argv[i], "--placement") == 0 && i + 1 < argc) {
      placement = placementFromString(argv[++i]);
      if (!placement) {
        std::cerr << "place_adapter: unknown placement '" << argv[i] << "'\n";
        return 2;
      }
    } else {
      std::cerr << "usage: place_adapter [--placement P] [--persistent]\n";
      return 2;
    }
  }
  const SchemaTable builtins = builtinSchemas();
  if (!persistent) {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const std::optional<std::string> placed = placeText(text, *placement, builtins);
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
    const std::optional<std::string> placed = placeText(program, *placement, builtins);
    if (!placed) return 1;
    std::fprintf(stdout, "%zu\n", placed->size());
    std::fwrite(placed->data(), 1, placed->size(), stdout);
    std::fflush(stdout);
  }
}
