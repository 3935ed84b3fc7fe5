// Key: the workload signature. Ordered, typed fields; canonical length-delimited encoding;
// XXH3-128 digest; a readable text form and its parser.
#pragma once

#include <cstdint>
#include <initializer_list>
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

class Key {
 public:
  Key();
  Key(std::initializer_list<Field> fields);
  explicit Key(std::vector<Field> fields);

  const std::vector<Field>& fields() const { return fields_; }
  const Value* find(std::string_view name) const;
  const Value& operator[](std::string_view name) const;  // missing name: UsageError
  std::int64_t integer(std::string_view name) const { return (*this)[name].as_int(); }

  // Canonical encoding: per field "<len>:<name><t><len>:<value text>" where t is the type
  // letter (i, r, s, b). Length-delimited, so ("ab","c") and ("a","bc") cannot collide.
  std::string encode() const;
  // Digest of encode(), computed once at construction.
  const Digest& digest() const { return digest_; }
  // "m=256,n=256,dtype=f32"; parse(text()) == *this.
  std::string text() const;
  // Parses the text form. Integers: 12, -3. Reals: 1.5, 2e3, -0.0. Booleans: true/false.
  // Anything else is a string; quote with "..." (\" and \\ escapes) to keep a numeric-looking
  // string or one holding ',' or '='. Errors are ParseError with the position.
  static Key parse(std::string_view text);

  friend bool operator==(const Key& a, const Key& b) { return a.fields_ == b.fields_; }

 private:
  std::vector<Field> fields_;
  Digest digest_;
};

}  // namespace tunekit
