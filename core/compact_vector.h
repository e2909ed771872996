// core/compact_vector.h: a vector one pointer wide, for IR members that are almost always empty.
//
// Node::kwargs, Node::meta and Arg::items are empty on nearly every node and argument, yet a
// std::vector costs 24 bytes of each whether it holds anything or not. Placement copies and
// analyses stream every node and argument of 10^6-node programs: those bytes are memory traffic
// (and, in a fresh copy, page faults) on every pass. CompactVector holds its elements behind one
// pointer, null while empty, and offers the part of std::vector's interface the IR's users
// need. A value type: copies are deep, moves take the elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace wb {

template <typename T>
class CompactVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  CompactVector() = default;
  CompactVector(std::vector<T> elements) {  // NOLINT(google-explicit-constructor): a drop-in
    if (!elements.empty()) elements_ = std::make_unique<std::vector<T>>(std::move(elements));
  }
  CompactVector(std::initializer_list<T> elements) : CompactVector(std::vector<T>(elements)) {}
  CompactVector(const CompactVector& other)
      : elements_(other.elements_ ? std::make_unique<std::vector<T>>(*other.elements_) : nullptr) {}
  CompactVector(CompactVector&&) noexcept = default;
  CompactVector& operator=(const CompactVector& other) {
    if (this != &other) *this = CompactVector(other);
    return *this;
  }
  CompactVector& operator=(CompactVector&&) noexcept = default;
  ~CompactVector() = default;

  bool empty() const { return !elements_ || elements_->empty(); }
  size_type size() const { return elements_ ? elements_->size() : 0; }
  T* data() { return elements_ ? elements_->data() : nullptr; }
  const T* data() const { return elements_ ? elements_->data() : nullptr; }
  iterator begin() { return data(); }
  iterator end() { return data() + size(); }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size(); }
  std::reverse_iterator<const T*> rbegin() const { return std::reverse_iterator<const T*>(end()); }
  std::reverse_iterator<const T*> rend() const { return std::reverse_iterator<const T*>(begin()); }
  T& operator[](size_type i) { return (*elements_)[i]; }
  const T& operator[](size_type i) const { return (*elements_)[i]; }
  T& at(size_type i) {
    if (i >= size()) throw std::out_of_range("CompactVector::at");
    return (*elements_)[i];
  }
  const T& at(size_type i) const {
    if (i >= size()) throw std::out_of_range("CompactVector::at");
    return (*elements_)[i];
  }
  T& front() { return (*elements_).front(); }
  const T& front() const { return (*elements_).front(); }
  T& back() { return (*elements_).back(); }
  const T& back() const { return (*elements_).back(); }

  void clear() { elements_.reset(); }
  void reserve(size_type n) {
    if (n > 0) storage().reserve(n);
  }
  void push_back(const T& value) { storage().push_back(value); }
  void push_back(T&& value) { storage().push_back(std::move(value)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return storage().emplace_back(std::forward<Args>(args)...);
  }
  iterator insert(const_iterator at, T value) {
    const std::size_t offset = static_cast<std::size_t>(at - begin());
    std::vector<T>& v = storage();
    // The insertion first: it may move the elements, and data() is read after it.
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(offset), std::move(value));
    return v.data() + offset;
  }
  iterator erase(const_iterator at) {
    const std::size_t offset = static_cast<std::size_t>(at - begin());
    elements_->erase(elements_->begin() + static_cast<std::ptrdiff_t>(offset));
    return data() + offset;
  }

  std::vector<T> toVector() const { return elements_ ? *elements_ : std::vector<T>{}; }

  friend bool operator==(const CompactVector& a, const CompactVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::vector<T>& storage() {
    if (!elements_) elements_ = std::make_unique<std::vector<T>>();
    return *elements_;
  }
  std::unique_ptr<std::vector<T>> elements_;  // null while empty
};

}  // namespace wb
