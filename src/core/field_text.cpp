#include "core/field_text.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
bool is_bare_char(char c) {
  return is_name_char(c) || c == '+' || c == '/' || c == ':';
}

std::string real_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// What an unquoted token means: integer, real, boolean, or nothing (a bare string).
std::optional<Value> typed_token(std::string_view tok, std::size_t pos) {
  if (tok == "true") return Value(true);
  if (tok == "false") return Value(false);
  if (tok == "nan") return Value(std::numeric_limits<double>::quiet_NaN());
  if (tok == "inf") return Value(std::numeric_limits<double>::infinity());
  if (tok == "-inf") return Value(-std::numeric_limits<double>::infinity());
  const char* b = tok.data();
  const char* e = b + tok.size();
  std::size_t digits_from = (!tok.empty() && tok[0] == '-') ? 1 : 0;
  if (tok.size() > digits_from && tok.find_first_not_of("0123456789", digits_from) == tok.npos) {
    std::int64_t v = 0;
    auto r = std::from_chars(b, e, v);
    if (r.ec == std::errc::result_out_of_range)
      throw ParseError("integer '" + std::string(tok) + "' does not fit in 64 bits", pos);
    return Value(v);
  }
  if (tok.find_first_of(".eE") != tok.npos && tok.find_first_of("0123456789") != tok.npos) {
    double v = 0;
    auto r = std::from_chars(b, e, v);
    if (r.ec == std::errc() && r.ptr == e) return Value(v);
    if (r.ec == std::errc::result_out_of_range && r.ptr == e)
      throw ParseError("real '" + std::string(tok) + "' is out of range", pos);
  }
  return std::nullopt;
}

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s)
    if (!is_bare_char(c)) return true;
  // Anything that could read back as a number or a keyword is quoted (even "1e999", which
  // would not parse as a real at all).
  const char c = s[0];
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') return true;
  return s == "true" || s == "false" || s == "nan" || s == "inf";
}

}  // namespace

std::string raw_text(const Value& v) {
  switch (v.type()) {
    case Value::Type::integer:
      return std::to_string(v.as_int());
    case Value::Type::real:
      return real_text(v.as_real());
    case Value::Type::boolean:
      return v.as_bool() ? "true" : "false";
    case Value::Type::string:
      return v.as_string();
  }
  return {};
}

std::string fields_text(const std::vector<Field>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += fields[i].name;
    out += '=';
    const Value& v = fields[i].value;
    if (v.is_string() && needs_quotes(v.as_string())) {
      out += '"';
      for (char c : v.as_string()) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    } else {
      out += raw_text(v);
    }
  }
  return out;
}

std::vector<Field> parse_fields(std::string_view text) {
  std::vector<Field> fields;
  std::size_t i = 0;
  const std::size_t n = text.size();
  if (n == 0) return fields;
  while (true) {
    std::size_t name_at = i;
    if (i >= n || !is_name_start(text[i]))
      throw ParseError("expected a field name (a letter or '_')", i);
    while (i < n && is_name_char(text[i])) ++i;
    std::string name(text.substr(name_at, i - name_at));
    if (i >= n || text[i] != '=')
      throw ParseError("expected '=' after field name '" + name + "'", i);
    ++i;
    for (const auto& f : fields)
      if (f.name == name) throw ParseError("field '" + name + "' appears twice", name_at);
    std::size_t value_at = i;
    if (i < n && text[i] == '"') {
      ++i;
      std::string s;
      bool closed = false;
      while (i < n) {
        char c = text[i++];
        if (c == '\\') {
          if (i >= n) break;
          char esc = text[i++];
          if (esc != '"' && esc != '\\')
            throw ParseError("unknown escape '\\" + std::string(1, esc) + "'", i - 2);
          s += esc;
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          s += c;
        }
      }
      if (!closed) throw ParseError("unterminated quoted string", value_at);
      fields.push_back(Field{std::move(name), Value(std::move(s))});
    } else {
      while (i < n && text[i] != ',') {
        if (!is_bare_char(text[i]))
          throw ParseError("unexpected character '" + std::string(1, text[i]) +
                               "' in value (quote strings with \"...\")",
                           i);
        ++i;
      }
      std::string_view tok = text.substr(value_at, i - value_at);
      if (tok.empty()) throw ParseError("empty value for field '" + name + "'", value_at);
      auto typed = typed_token(tok, value_at);
      fields.push_back(Field{std::move(name), typed ? *typed : Value(std::string(tok))});
    }
    if (i == n) break;
    if (text[i] != ',') throw ParseError("expected ',' between fields", i);
    ++i;
    if (i == n) throw ParseError("trailing ','", i - 1);
  }
  return fields;
}

}  // namespace tunekit::detail
