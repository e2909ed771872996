// core/xml.h: text escaped for XML and for graphviz's HTML-like labels, which share the same
// four special characters (the memory chart's SVG, core/memplan_svg.cpp; draw/'s DOT labels).
#pragma once

#include <string>
#include <string_view>

namespace wb {

inline std::string escapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace wb
