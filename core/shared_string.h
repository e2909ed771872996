// core/shared_string.h: an immutable string that its copies share, for Node::target.
//
// A program names a few dozen ops, each on thousands of nodes, and most normalised targets
// ("aten::add.Tensor", "aten::slice_copy.Tensor") are too long for std::string's inline buffer:
// as a std::string, every node held a heap block of its own, which every copy of a program
// allocated again and every pass over 10^6 nodes read from memory. A SharedString is 16 bytes
// and its copies point at one block: a program copy allocates nothing for its targets, and
// when the producer hands every node the same SharedString for the same op (the text reader
// and the generators do, through a TargetInterner), a pass reads one hot block per op.
//
// A value type: it is never modified in place, only replaced, so sharing is invisible. Reads
// go through the std::string it holds (str(), or the implicit conversions).
#pragma once

#include <compare>
#include <functional>
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace wb {

class SharedString {
 public:
  SharedString() = default;
  // Implicit, as std::string's own: `node.target = "aten::add.Tensor"` reads as an assignment.
  SharedString(std::string text)  // NOLINT(google-explicit-constructor)
      : text_(text.empty() ? nullptr : std::make_shared<const std::string>(std::move(text))) {}
  SharedString(std::string_view text) : SharedString(std::string(text)) {}  // NOLINT
  SharedString(const char* text) : SharedString(std::string(text)) {}       // NOLINT

  const std::string& str() const { return text_ ? *text_ : emptyString(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return str(); }    // NOLINT(google-explicit-constructor)

  bool empty() const { return !text_; }
  std::size_t size() const { return str().size(); }
  const char* data() const { return str().data(); }
  const char* c_str() const { return str().c_str(); }
  bool starts_with(std::string_view prefix) const { return std::string_view(str()).starts_with(prefix); }
  bool ends_with(std::string_view suffix) const { return std::string_view(str()).ends_with(suffix); }
  std::size_t find(std::string_view s, std::size_t from = 0) const { return str().find(s, from); }
  std::size_t find(char c, std::size_t from = 0) const { return str().find(c, from); }
  std::size_t rfind(std::string_view s, std::size_t from = std::string::npos) const { return str().rfind(s, from); }
  std::size_t rfind(char c, std::size_t from = std::string::npos) const { return str().rfind(c, from); }
  std::string substr(std::size_t at, std::size_t count = std::string::npos) const { return str().substr(at, count); }
  void clear() { text_.reset(); }
  // Whether both hold the very same block (then they are equal without comparing characters).
  bool sharesTextWith(const SharedString& other) const { return text_ == other.text_; }

  friend bool operator==(const SharedString& a, const SharedString& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator==(const SharedString& a, std::string_view b) { return std::string_view(a.str()) == b; }
  friend bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedString& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const SharedString& a, const SharedString& b) {
    return a.str().compare(b.str()) <=> 0;
  }
  friend std::strong_ordering operator<=>(const SharedString& a, std::string_view b) {
    return std::string_view(a.str()).compare(b) <=> 0;
  }
  friend std::string operator+(std::string a, const SharedString& b) { return a += b.str(); }
  friend std::string operator+(const char* a, const SharedString& b) { return std::string(a) += b.str(); }
  friend std::string operator+(const SharedString& a, std::string_view b) { return std::string(a.str()) += b; }
  friend std::string operator+(const SharedString& a, const char* b) { return std::string(a.str()) += b; }
  friend std::ostream& operator<<(std::ostream& out, const SharedString& s) { return out << s.str(); }

 private:
  static const std::string& emptyString() {
    static const std::string kEmpty;
    return kEmpty;
  }
  std::shared_ptr<const std::string> text_;  // null for the empty string
};

// Hands out one SharedString per distinct text, for a producer of many nodes (a reader, a
// generator): the nodes of one op then share one block. Owned by the producer, for one
// program or a few.
class TargetInterner {
 public:
  SharedString operator()(std::string_view text) {
    auto it = known_.find(text);
    if (it == known_.end()) it = known_.emplace(std::string(text), SharedString(text)).first;
    return it->second;
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, SharedString, Hash, std::equal_to<>> known_;
};

}  // namespace wb
