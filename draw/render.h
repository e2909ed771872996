// draw/render.h: turns DOT text into a picture by running graphviz's `dot`, found on PATH (no
// library dependency: the set-up installs the graphviz package).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wb::draw {

// The path of an executable `program` in a directory of $PATH, or nullopt.
std::optional<std::string> findOnPath(std::string_view program);

// What a caller prints when `dot` is missing.
inline constexpr std::string_view kDotMissing =
    "graphviz's `dot` is not on PATH: install graphviz (apt-get install graphviz), or write DOT text with --dot";

// Runs `dot -T<format>` on `dot` and writes the result to `outPath` atomically (a temporary file
// in the same directory, then a rename). Returns nullopt on success, else the reason (dot
// missing, dot failed with its message, a file that cannot be written).
std::optional<std::string> renderWithDot(std::string_view dot, std::string_view format, const std::string& outPath);

}  // namespace wb::draw
