// tests/hazard_expectations.h: the `# expect` lines of a corpus/hazards/ file, read into
// statements (the grammar is docs/hazard-expectations.md). tests/hazards_test.cpp renders what
// each placement, the oracle and the campaign do on the file as statements of the same form
// and compares the two.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/placement.h"

namespace wb::testing {

// What a statement is about.
enum class ExpectKind {
  Placed,         // `# expect P: LAYOUT -> (OUTPUTS)` or `# expect P fails: MESSAGE`
  Copy,           // `# expect P COPY: RULE EXPLANATION`
  Skip,           // `# expect P skips: TEXT`
  Oracle,         // `# expect oracle P: holds | bug [MODES] | fails`
  OracleFindings, // `# expect oracle findings: none | KIND [MODES], ...`
  Finding,        // `# expect finding P: none | DESCRIPTION`
};

// One statement about one placement (a line naming several placements gives one each).
struct Expectation {
  ExpectKind kind = ExpectKind::Placed;
  std::optional<Placement> placement;  // none for OracleFindings
  std::string subject;                 // Placed: "" or "fails"; Copy: the copy's name
  std::string value;                   // the text after ": "
  int line = 0;                        // in the file, for messages
  friend bool operator==(const Expectation&, const Expectation&) = default;
};

struct ParsedExpectations {
  std::vector<Expectation> statements;  // in file order
  std::vector<std::string> errors;      // "file:line: message"
};

namespace detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

inline std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < s.size()) {
    while (at < s.size() && s[at] == ' ') ++at;
    const std::size_t end = std::min(s.find(' ', at), s.size());
    if (end > at) out.emplace_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

}  // namespace detail

// Reads every line of the leading comment block that starts with "# expect ". The block ends
// at the first line that is not a comment.
inline ParsedExpectations parseExpectations(std::string_view text, const std::string& fileName) {
  ParsedExpectations out;
  int lineNumber = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++lineNumber;
    if (!line.starts_with("#")) break;
    constexpr std::string_view kPrefix = "# expect ";
    if (!line.starts_with(kPrefix)) continue;
    auto fail = [&](const std::string& message) {
      out.errors.push_back(fileName + ":" + std::to_string(lineNumber) + ": " + message + ": " + std::string(line));
    };
    const std::string_view rest = line.substr(kPrefix.size());
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos) {
      fail("no ':' after what is expected");
      continue;
    }
    const std::vector<std::string> head = detail::words(rest.substr(0, colon));
    const std::string value(detail::trim(rest.substr(colon + 1)));
    if (head.empty() || value.empty()) {
      fail("nothing expected");
      continue;
    }
    std::size_t word = 0;
    std::optional<ExpectKind> kind;
    if (head[0] == "oracle") kind = ExpectKind::Oracle, ++word;
    else if (head[0] == "finding") kind = ExpectKind::Finding, ++word;
    if (kind == ExpectKind::Oracle && word < head.size() && head[word] == "findings") {
      if (head.size() != 2) {
        fail("`oracle findings` takes no placement");
        continue;
      }
      out.statements.push_back({ExpectKind::OracleFindings, std::nullopt, "", value, lineNumber});
      continue;
    }
    // The placements: "early", or "early, end, upstream" (a comma after each but the last).
    std::vector<Placement> placements;
    bool more = true;
    while (more && word < head.size()) {
      std::string name = head[word];
      more = name.ends_with(",");
      if (more) name.pop_back();
      const std::optional<Placement> p = placementFromString(name);
      if (!p) break;
      placements.push_back(*p);
      ++word;
    }
    if (placements.empty() || more) {
      fail("expected a placement (" + placementNames(", ") + "), or several separated by ', '");
      continue;
    }
    std::string subject = word < head.size() ? head[word++] : "";
    if (word != head.size()) {
      fail("expected one subject after the placements");
      continue;
    }
    if (!kind) {
      kind = subject.empty() || subject == "fails" ? ExpectKind::Placed
             : subject == "skips"                  ? ExpectKind::Skip
                                                   : ExpectKind::Copy;
    } else if (!subject.empty()) {
      fail("`oracle` and `finding` take placements only");
      continue;
    }
    for (Placement p : placements) out.statements.push_back({*kind, p, subject, value, lineNumber});
  }
  return out;
}

}  // namespace wb::testing
