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
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

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

// Writes all of `bytes` to standard output; false if it is closed.
bool writeAll(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t w = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

// The persistent protocol: reads what standard input has in one call, answers every whole
// frame in it, and writes those answers in one call before it waits for more (wbcheck may have
// several requests in flight: docs/pass-protocol.md). Status 1 when a placement fails or a
// request is not a frame; 0 when standard input ends.
int serveFrames(Placement placement, const SchemaTable& builtins, std::optional<ProgramForm> form) {
  std::string in, answers;
  std::vector<char> chunk(std::size_t{1} << 16);
  auto notAFrame = [] {
    std::cerr << "place_adapter: a request that is not a frame\n";
    return 1;
  };
  for (;;) {
    std::size_t used = 0;  // of `in`: the frames answered
    for (;;) {
      const std::size_t newline = in.find('\n', used);
      if (newline == std::string::npos) {
        if (in.size() - used > 20) return notAFrame();  // no count is that long
        break;
      }
      char* end = nullptr;
      const unsigned long long bytes = std::strtoull(in.c_str() + used, &end, 10);
      if (end == in.c_str() + used || end != in.c_str() + newline) return notAFrame();
      if (in.size() - newline - 1 < bytes) break;  // the rest of the request is still coming
      const std::optional<std::string> placed =
          placeText(std::string_view(in).substr(newline + 1, bytes), placement, builtins, form);
      if (!placed) {
        writeAll(answers);  // the answers before it are owed
        return 1;
      }
      answers += std::to_string(placed->size()) + "\n";
      answers += *placed;
      used = newline + 1 + bytes;
    }
    in.erase(0, used);
    if (!writeAll(answers)) return 1;
    answers.clear();
    ssize_t r = 0;
    do r = ::read(STDIN_FILENO, chunk.data(), chunk.size());
    while (r < 0 && errno == EINTR);
    if (r < 0) return 1;
    if (r == 0) return in.empty() ? 0 : notAFrame();  // the end of the requests, or of a frame cut short
    in.append(chunk.data(), static_cast<std::size_t>(r));
  }
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
  return serveFrames(*placement, builtins, form);
}
