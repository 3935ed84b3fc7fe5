#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "tunekit/errors.hpp"
#include "tunekit/registry.hpp"

namespace tunekit {

SpecOptions SpecOptions::parse(std::string_view kind, std::string_view name,
                               std::string_view text) {
  SpecOptions o;
  o.what_ = std::string(kind) + " '" + std::string(name) + "'";
  const std::string example = std::string(name) + ":key=value,key=value";
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError(o.what_ + ": option '" + std::string(item) +
                       "' is not key=value; write e.g. '" + example + "'");
    const std::string key(item.substr(0, eq));
    for (const auto& [k, v] : o.values_)
      if (k == key) throw UsageError(o.what_ + ": option '" + key + "' given twice");
    o.values_.emplace_back(key, std::string(item.substr(eq + 1)));
    start = comma + 1;
  }
  return o;
}

namespace {
const std::string* lookup(const std::vector<std::pair<std::string, std::string>>& values,
                          const std::string& key) {
  for (const auto& [k, v] : values)
    if (k == key) return &v;
  return nullptr;
}
}  // namespace

double SpecOptions::number(const std::string& key, double fallback, double min, double max) {
  known_.push_back(key + " (number in [" + fmt::format("{:g}, {:g}])", min, max));
  const std::string* text = lookup(values_, key);
  if (!text) return fallback;
  double v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || !(v >= min && v <= max))
    throw UsageError(fmt::format("{}: {} must be a number in [{:g}, {:g}], got {}", what_, key, min,
                                 max, *text));
  return v;
}

std::size_t SpecOptions::count(const std::string& key, std::size_t fallback, std::size_t min,
                               std::size_t max) {
  known_.push_back(key + " (integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                   "])");
  const std::string* text = lookup(values_, key);
  if (!text) return fallback;
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < min || v > max)
    throw UsageError(
        fmt::format("{}: {} must be an integer in [{}, {}], got {}", what_, key, min, max, *text));
  return v;
}

std::string SpecOptions::word(const std::string& key, const std::string& fallback,
                              const std::vector<std::string>& allowed) {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : "|") + a;
  known_.push_back(key + " (" + list + ")");
  const std::string* text = lookup(values_, key);
  if (!text) return fallback;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *text) == allowed.end())
    throw UsageError(fmt::format("{}: {} must be one of {}, got {}", what_, key, list, *text));
  return *text;
}

void SpecOptions::check() const {
  for (const auto& [key, value] : values_) {
    const bool ok = std::any_of(known_.begin(), known_.end(), [&](const std::string& k) {
      return k.compare(0, key.size() + 1, key + " ") == 0;
    });
    if (ok) continue;
    std::string accepted;
    for (const std::string& k : known_) accepted += (accepted.empty() ? "" : ", ") + k;
    throw UsageError(what_ + " has no option '" + key + "'; it accepts " +
                     (accepted.empty() ? std::string("no options") : accepted));
  }
}

}  // namespace tunekit

namespace tunekit {

std::string SpecOptions::text() const {
  std::string out;
  for (const auto& [k, v] : values_) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

}  // namespace tunekit
