#include "tunekit/value.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/field_text.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {

std::string_view to_string(Value::Type type) {
  switch (type) {
    case Value::Type::integer:
      return "integer";
    case Value::Type::real:
      return "real";
    case Value::Type::string:
      return "string";
    case Value::Type::boolean:
      return "boolean";
  }
  return "unknown";
}

namespace {
[[noreturn]] void wrong_type(Value::Type want, const Value& got) {
  throw UsageError("expected a value of type " + std::string(to_string(want)) + ", got " +
                   std::string(to_string(got.type())) + " " + got.text());
}
}  // namespace

namespace {
std::int64_t checked(unsigned long long v) {
  if (v > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()))
    throw UsageError("value " + std::to_string(v) + " does not fit in a 64-bit signed integer");
  return static_cast<std::int64_t>(v);
}
}  // namespace

Value::Value(unsigned long v) : v_(checked(v)) {}
Value::Value(unsigned long long v) : v_(checked(v)) {}

std::int64_t Value::as_int() const {
  if (!is_integer()) wrong_type(Type::integer, *this);
  return std::get<std::int64_t>(v_);
}
double Value::as_real() const {
  if (is_integer()) return static_cast<double>(std::get<std::int64_t>(v_));
  if (!is_real()) wrong_type(Type::real, *this);
  return std::get<double>(v_);
}
const std::string& Value::as_string() const {
  if (!is_string()) wrong_type(Type::string, *this);
  return std::get<std::string>(v_);
}
bool Value::as_bool() const {
  if (!is_boolean()) wrong_type(Type::boolean, *this);
  return std::get<bool>(v_);
}

bool operator==(const Value& a, const Value& b) {
  if (a.is_real() && b.is_real()) {
    double x = std::get<double>(a.v_);
    double y = std::get<double>(b.v_);
    return (std::isnan(x) && std::isnan(y)) ||
           std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
  }
  return a.v_ == b.v_;
}

std::string Value::text() const {
  return detail::fields_text({Field{"", *this}}).substr(1);
}

Config::Config(std::initializer_list<Field> fields) : Config(std::vector<Field>(fields)) {}
Config::Config(std::vector<Field> fields) {
  for (auto& f : fields) {
    if (find(f.name)) throw UsageError("config names '" + f.name + "' twice");
    fields_.push_back(std::move(f));
  }
}

Config& Config::set(std::string name, Value value) {
  for (auto& f : fields_) {
    if (f.name == name) {
      f.value = std::move(value);
      return *this;
    }
  }
  fields_.push_back(Field{std::move(name), std::move(value)});
  return *this;
}

const Value* Config::find(std::string_view name) const {
  for (const auto& f : fields_)
    if (f.name == name) return &f.value;
  return nullptr;
}

const Value& Config::operator[](std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  throw UsageError("config has no parameter '" + std::string(name) + "' (it has: " + text() + ")");
}

std::string Config::text() const {
  return detail::fields_text(fields_);
}
Config Config::parse(std::string_view text) {
  return Config(detail::parse_fields(text));
}

}  // namespace tunekit
