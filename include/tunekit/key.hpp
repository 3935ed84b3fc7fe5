// Key: the workload signature. Ordered, typed fields; canonical length-delimited encoding;
// XXH3-128 digest; a readable text form and its parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit {

// A 128-bit digest (XXH3-128). hex() is 32 lowercase hex digits, high half first.
struct Digest {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::string hex() const;
  static Digest of(std::string_view bytes);
  friend bool operator==(const Digest&, const Digest&) = default;
};

// Built on every dispatch (Tuner::run builds one from the arguments), so a typical key costs
// no heap allocation: up to inline_fields fields live inside the Key, and the digest is
// hashed from a stack buffer. Names and string values up to 15 characters stay inline too
// (std::string's small buffer).
class Key {
 public:
  static constexpr std::size_t inline_fields = 8;

  Key();
  Key(std::initializer_list<Field> fields);
  explicit Key(std::vector<Field> fields);
  Key(const Key& other);
  Key(Key&& other) noexcept;
  Key& operator=(const Key& other);
  Key& operator=(Key&& other) noexcept;
  ~Key();

  std::span<const Field> fields() const { return {data(), size_}; }
  const Value* find(std::string_view name) const;
  const Value& operator[](std::string_view name) const;  // missing name: UsageError
  std::int64_t integer(std::string_view name) const { return (*this)[name].as_int(); }

  // Canonical encoding: per field "<len>:<name><t><len>:<value text>" where t is the type
  // letter (i, r, s, b). Length-delimited, so ("ab","c") and ("a","bc") cannot collide.
  std::string encode() const;
  // Digest of encode(), computed once at construction (without building encode()'s string).
  const Digest& digest() const { return digest_; }
  // "m=256,n=256,dtype=f32"; parse(text()) == *this.
  std::string text() const;
  // Parses the text form. Integers: 12, -3. Reals: 1.5, 2e3, -0.0. Booleans: true/false.
  // Anything else is a string; quote with "..." (\" and \\ escapes) to keep a numeric-looking
  // string or one holding ',' or '='. Errors are ParseError with the position.
  static Key parse(std::string_view text);

  friend bool operator==(const Key& a, const Key& b);

 private:
  bool on_heap() const { return size_ > inline_fields; }
  const Field* data() const { return on_heap() ? heap_.data() : inline_.fields; }
  void copy_from(std::span<const Field> fields);
  void move_from(Key& other) noexcept;
  void destroy() noexcept;

  // Raw storage: only the first size_ slots are constructed (none when on the heap).
  union InlineFields {
    InlineFields() {}
    ~InlineFields() {}
    Field fields[inline_fields];
  };
  InlineFields inline_;
  std::vector<Field> heap_;  // the fields when there are more than inline_fields
  std::size_t size_ = 0;
  Digest digest_;
};

}  // namespace tunekit
