#include "tuner/search.hpp"

#include <chrono>
#include <cstdlib>
#include <map>

#include "tunekit/errors.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {
namespace {

using SearchFn = void (*)(SearchContext&, const SearchOptions&);

struct Registered {
  SearchFn fn;
  std::vector<std::string> keys;  // accepted option names
};

const std::map<std::string, Registered, std::less<>>& registry() {
  static const std::map<std::string, Registered, std::less<>> table{
      {"exhaustive", {&exhaustive_search, {}}},
      {"racing", {&racing_search, {"round", "z", "min_samples", "max_samples"}}},
  };
  return table;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

double SearchOptions::get(std::string_view key, double fallback) const {
  for (const auto& [k, v] : values)
    if (k == key) return v;
  return fallback;
}

std::vector<std::string> search_names() {
  std::vector<std::string> names;
  for (const auto& [name, r] : registry()) names.push_back(name);
  return names;
}

SearchOptions parse_search_spec(std::string_view spec) {
  SearchOptions o;
  auto colon = spec.find(':');
  o.name = std::string(spec.substr(0, colon));
  auto it = registry().find(o.name);
  if (it == registry().end()) {
    throw UsageError("unknown search '" + o.name + "': use one of " + joined(search_names()));
  }
  if (colon == spec.npos) return o;
  std::string_view rest = spec.substr(colon + 1);
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    auto eq = item.find('=');
    std::string key(item.substr(0, eq));
    bool known = false;
    for (const auto& k : it->second.keys) known |= k == key;
    if (eq == item.npos || !known) {
      throw UsageError("search '" + o.name + "': bad option '" + std::string(item) +
                       "'; it accepts " +
                       (it->second.keys.empty() ? std::string("no options")
                                                : joined(it->second.keys) + " as key=number"));
    }
    std::string value(item.substr(eq + 1));
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') {
      throw UsageError("search '" + o.name + "': option " + key + " needs a number, got '" + value +
                       "'");
    }
    o.values.emplace_back(key, v);
    if (comma == rest.npos) break;
    rest = rest.substr(comma + 1);
  }
  return o;
}

TuneReport run_search(Device& device, const OpBase& op, const Key& key, const TunerOptions& options,
                      const ModelReport* model, bool* model_cut) {
  const SearchOptions spec = parse_search_spec(options.search);
  const auto start = std::chrono::steady_clock::now();
  SearchContext context(device, op, key, options);
  context.report().search = options.search;
  if (model) context.guide(*model);
  if (context.prepare_inputs()) {
    registry().find(spec.name)->second.fn(context, spec);
    context.choose();
  }
  if (model_cut) *model_cut = context.model_cut();
  TuneReport& r = context.report();
  r.seconds_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(r);
}

}  // namespace tunekit::detail
