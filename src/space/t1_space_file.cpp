// Reads T1 space files: ConfigurationSpace.TuningParameters (Name, Type, Values) and
// ConfigurationSpace.Conditions (Expression).
#include <charconv>

#include <nlohmann/json.hpp>

#include "core/safe_file.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

namespace {

using Json = nlohmann::json;

// A T1 space file lists parameters and conditions, not measurements: 16 MiB is far beyond any
// real one (docs/formats.md).
constexpr std::size_t kT1SpaceMaxBytes = std::size_t{16} << 20;

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

// One element of a Python list literal: a quoted string, True/False, an integer or a real.
Value literal_value(const std::string& text, const std::string& type) {
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front())
    return Value(text.substr(1, text.size() - 2));
  if (text == "True" || text == "False") return Value(text == "True");
  if (type != "string" && type != "str") {
    std::int64_t i = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
    if (ec == std::errc() && end == text.data() + text.size())
      return type == "float" ? Value(static_cast<double>(i)) : Value(i);
    double d = 0;
    const auto [dend, dec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (dec == std::errc() && dend == text.data() + text.size()) return Value(d);
  }
  return Value(text);
}

std::vector<Value> python_list(const std::string& text, const std::string& type,
                               const std::string& where) {
  const std::string t = trim(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']')
    throw UsageError(where + ": Values must be a list like \"[1, 2, 4]\", got " + text);
  std::vector<Value> out;
  std::string current;
  char quote = 0;
  for (std::size_t i = 1; i + 1 < t.size(); ++i) {
    const char c = t[i];
    if (quote) {
      if (c == quote) quote = 0;
      current += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      current += c;
    } else if (c == ',') {
      out.push_back(literal_value(trim(current), type));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!trim(current).empty()) out.push_back(literal_value(trim(current), type));
  return out;
}

Value t1_parameter_value(const Json& j, const std::string& where) {
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<std::int64_t>());
  if (j.is_number()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  throw UsageError(where + ": unsupported value " + j.dump());
}

}  // namespace

Space read_t1_space(const std::filesystem::path& file) {
  const std::string text = detail::read_outside_file(file, kT1SpaceMaxBytes, "space file");
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    throw UsageError(file.string() + " is not valid JSON: " + e.what());
  }
  const std::string where = file.string();
  if (!doc.contains("ConfigurationSpace") ||
      !doc["ConfigurationSpace"].contains("TuningParameters"))
    throw UsageError(where +
                     ": not a T1 space file (ConfigurationSpace.TuningParameters is missing)");
  const Json& cs = doc["ConfigurationSpace"];
  Space space;
  try {
    for (const Json& p : cs["TuningParameters"]) {
      const std::string name = p.at("Name").get<std::string>();
      const std::string type = p.value("Type", std::string("int"));
      const Json& values = p.at("Values");
      std::vector<Value> list;
      if (values.is_string()) {
        list = python_list(values.get<std::string>(), type, where + ": parameter " + name);
      } else if (values.is_array()) {
        for (const Json& v : values) list.push_back(t1_parameter_value(v, where));
      } else {
        throw UsageError(where + ": parameter " + name + " has Values that are not a list");
      }
      space.param(name, std::move(list));
    }
    if (cs.contains("Conditions")) {
      for (const Json& c : cs["Conditions"]) {
        const std::string expression = c.at("Expression").get<std::string>();
        try {
          space.constraint(expression);
        } catch (const ParseError& e) {
          std::string reason = e.what();
          reason = reason.substr(0, reason.rfind(" (at position"));
          throw ParseError(where + ": condition \"" + expression + "\": " + reason, e.position());
        }
      }
    }
  } catch (const Json::exception& e) {
    throw UsageError(where + ": " + e.what());
  }
  return space;
}

}  // namespace tunekit
