#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "tunekit/errors.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

StrategyOptions StrategyOptions::parse(std::string_view strategy, std::string_view text) {
  StrategyOptions o;
  o.strategy_ = std::string(strategy);
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError("strategy '" + o.strategy_ + "': option '" + std::string(item) +
                       "' is not key=value; write e.g. '" + o.strategy_ + ":key=value,key=value'");
    const std::string key(item.substr(0, eq));
    for (const auto& [k, v] : o.values_)
      if (k == key)
        throw UsageError("strategy '" + o.strategy_ + "': option '" + key + "' given twice");
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

double StrategyOptions::number(const std::string& key, double fallback, double min, double max) {
  known_.push_back(key + " (number in [" + fmt::format("{:g}, {:g}])", min, max));
  const std::string* text = lookup(values_, key);
  if (!text) return fallback;
  double v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || !(v >= min && v <= max))
    throw UsageError("strategy '" + strategy_ + "': " + key + "=" + *text +
                     fmt::format(" must be a number in [{:g}, {:g}]", min, max));
  return v;
}

std::size_t StrategyOptions::count(const std::string& key, std::size_t fallback, std::size_t min,
                                   std::size_t max) {
  known_.push_back(key + " (integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                   "])");
  const std::string* text = lookup(values_, key);
  if (!text) return fallback;
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < min || v > max)
    throw UsageError("strategy '" + strategy_ + "': " + key + "=" + *text +
                     " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "]");
  return v;
}

std::string StrategyOptions::word(const std::string& key, const std::string& fallback,
                                  const std::vector<std::string>& allowed) {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : "|") + a;
  known_.push_back(key + " (" + list + ")");
  const std::string* text = lookup(values_, key);
  if (!text) return fallback;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *text) == allowed.end())
    throw UsageError("strategy '" + strategy_ + "': " + key + "=" + *text + " must be one of " +
                     list);
  return *text;
}

void StrategyOptions::check() const {
  for (const auto& [key, value] : values_) {
    const bool ok = std::any_of(known_.begin(), known_.end(), [&](const std::string& k) {
      return k.compare(0, key.size() + 1, key + " ") == 0;
    });
    if (ok) continue;
    std::string accepted;
    for (const std::string& k : known_) accepted += (accepted.empty() ? "" : ", ") + k;
    throw UsageError("strategy '" + strategy_ + "' has no option '" + key + "'; it accepts " +
                     (accepted.empty() ? std::string("no options") : accepted));
  }
}

}  // namespace tunekit
