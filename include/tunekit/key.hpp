// Key: the workload signature. Ordered, typed fields; canonical length-delimited encoding;
// XXH3-128 digest; a readable text form and its parser.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// The values of a typed key (Op::key(names, values)) in the op's declared field order: what
// Tuner::run hashes on every call instead of building a Key. Fixed capacity and held inline,
// so making one never touches the heap: integers, reals, booleans, and strings of up to
// max_text characters (a longer one is a UsageError: declare such an op's key as a Key).
class KeyValues {
 public:
  static constexpr std::size_t capacity = Key::inline_fields;
  static constexpr std::size_t max_text = 23;

  KeyValues() { words_[0] = 0; }
  // KeyValues{a.m, a.n, "f32"}: each value as add() takes it.
  template <class... T>
  requires(sizeof...(T) >= 1 && sizeof...(T) <= capacity) explicit KeyValues(const T&... values)
      : KeyValues() {
    (add(values), ...);
  }
  // Copies only the words in use.
  KeyValues(const KeyValues& other) : used_(other.used_), size_(other.size_) {
    std::memcpy(words_, other.words_, used_ * 8);
  }
  KeyValues& operator=(const KeyValues& other) {
    used_ = other.used_;
    size_ = other.size_;
    std::memmove(words_, other.words_, used_ * 8);
    return *this;
  }

  // Appends a value: bool is a boolean, other integral types an integer (an unsigned one above
  // INT64_MAX is a UsageError), floating types a real, anything a string_view takes a string,
  // and a Value as its type. More than capacity values is a UsageError.
  template <class T>
  KeyValues& add(const T& v) {
    if constexpr (std::same_as<T, bool>) {
      return push(Value::Type::boolean, v ? 1 : 0);
    } else if constexpr (std::integral<T>) {
      if constexpr (std::unsigned_integral<T> && sizeof(T) >= sizeof(std::int64_t))
        if (v > static_cast<T>(INT64_MAX)) unsigned_too_large(static_cast<std::uint64_t>(v));
      return push(Value::Type::integer, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
    } else if constexpr (std::floating_point<T>) {
      return push(Value::Type::real, std::bit_cast<std::uint64_t>(static_cast<double>(v)));
    } else if constexpr (std::same_as<T, Value>) {
      return add_value(v);
    } else {
      static_assert(std::convertible_to<const T&, std::string_view>,
                    "a key value is an integer, a real, a bool or a string");
      return add_text(std::string_view(v));
    }
  }

  std::size_t size() const { return size_; }
  // Value i as a Value (a string one is copied into a std::string); i < size().
  Value value(std::size_t i) const;
  // XXH3-128 of the encoding (a word of per-value tags, type and string length, then each
  // value's 8 bytes of bits or a string's characters, zero-padded to whole words), seeded with
  // and folded with `names` (the op's declared names' digest): different exactly when the
  // names or values are, but for a 128-bit collision, the bar the canonical Key's digest sets.
  Digest digest(const Digest& names) const;

 private:
  // Whole 8-byte words only, each written once: the hash's 8-byte loads then never straddle
  // narrower stores (a store-forwarding stall that cost more than the hash).
  void tag(Value::Type type, std::size_t length) {
    if (size_ == capacity) too_many();
    words_[0] |= (static_cast<std::uint64_t>(type) + 1 + (length << 3)) << (8 * size_);
    ++size_;
  }
  KeyValues& push(Value::Type type, std::uint64_t bits) {
    tag(type, 0);
    words_[used_++] = bits;
    return *this;
  }
  KeyValues& add_text(std::string_view text) {
    if (text.size() > max_text) text_too_long(text);
    tag(Value::Type::string, text.size());
    for (std::size_t at = 0; at < text.size(); at += 8) {
      // Shifted into a register, not copied through memory: a literal folds to a constant.
      std::uint64_t word = 0;
      for (std::size_t k = 0; k < 8 && at + k < text.size(); ++k)
        word |= static_cast<std::uint64_t>(static_cast<unsigned char>(text[at + k])) << (8 * k);
      words_[used_++] = word;
    }
    return *this;
  }
  KeyValues& add_value(const Value& v);
  [[noreturn]] static void too_many();
  [[noreturn]] static void text_too_long(std::string_view text);
  [[noreturn]] static void unsigned_too_large(std::uint64_t v);

  // words_[0]: byte i is value i's tag (type + 1, string length << 3); then the values.
  // Only words_[0] starts zeroed: the others are written before they are read.
  std::uint64_t words_[1 + capacity * ((max_text + 7) / 8)];
  std::size_t used_ = 1;
  std::size_t size_ = 0;
};

}  // namespace tunekit
