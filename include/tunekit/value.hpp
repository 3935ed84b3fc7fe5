// Value: one typed scalar (integer, real, string, boolean). Config: an ordered map name -> Value.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tunekit {

class Value {
 public:
  enum class Type { integer, real, string, boolean };

  Value() : v_(std::int64_t{0}) {}
  Value(int v) : v_(std::int64_t{v}) {}
  Value(long v) : v_(std::int64_t{v}) {}
  Value(long long v) : v_(std::int64_t{v}) {}
  Value(unsigned v) : v_(std::int64_t{v}) {}
  // Sizes: a value above INT64_MAX is a UsageError.
  Value(unsigned long v);
  Value(unsigned long long v);
  Value(double v) : v_(v) {}
  Value(bool v) : v_(v) {}
  Value(std::string v) : v_(std::move(v)) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(std::string_view v) : v_(std::string(v)) {}

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_integer() const { return type() == Type::integer; }
  bool is_real() const { return type() == Type::real; }
  bool is_string() const { return type() == Type::string; }
  bool is_boolean() const { return type() == Type::boolean; }

  // Typed access; a wrong type is a UsageError naming both types.
  std::int64_t as_int() const;
  double as_real() const;  // integers convert
  const std::string& as_string() const;
  bool as_bool() const;

  // Text form used in keys and configs: 42, 1.5, true, abc, "needs quotes".
  // Reals always carry a '.' or an exponent so the type survives a round trip.
  std::string text() const;

  // Equal when the canonical encodings are: reals compare by bits (0.0 != -0.0), NaN == NaN.
  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

 private:
  std::variant<std::int64_t, double, std::string, bool> v_;
};

std::string_view to_string(Value::Type type);

struct Field {
  std::string name;
  Value value;
  friend bool operator==(const Field&, const Field&) = default;
};

// Ordered map parameter name -> Value: one point of a space. Keeps insertion order.
class Config {
 public:
  Config() = default;
  Config(std::initializer_list<Field> fields);
  explicit Config(std::vector<Field> fields);

  // Sets (or replaces) a parameter; a new name goes to the end.
  Config& set(std::string name, Value value);
  // The value of a parameter; a missing name is a UsageError.
  const Value& operator[](std::string_view name) const;
  const Value* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  const std::vector<Field>& fields() const { return fields_; }
  std::size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  // "mc=64,nc=256,order=ikj"
  std::string text() const;
  static Config parse(std::string_view text);

  friend bool operator==(const Config&, const Config&) = default;

 private:
  std::vector<Field> fields_;
};

}  // namespace tunekit
