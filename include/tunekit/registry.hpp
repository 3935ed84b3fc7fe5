// Plug-ins by name (DESIGN §6, STYLE "plug-ins by name"): one entry shape
// {name, description, options, make} and one options-string parser for every seam that is
// chosen by a spec such as "genetic:pop=20" or "racing:round=4" (strategies, schedules).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/errors.hpp"

namespace tunekit {

// key=value options of one plug-in. Every lookup records the key as known; check() then
// rejects any key the plug-in did not ask for, listing what it accepts.
class SpecOptions {
 public:
  // `kind` and `name` name the plug-in in messages ("strategy 'anneal'"); `text` is the part
  // after ':' in a spec ("t0=2,alpha=0.99"). Malformed: UsageError.
  static SpecOptions parse(std::string_view kind, std::string_view name, std::string_view text);

  // Bounded getters. NaN, infinities (unless within [min, max]), values outside [min, max], a
  // sign on a count and trailing characters are UsageErrors naming the plug-in, the key, the
  // allowed range and the value given: "strategy 'genetic': pop must be an integer in [2,
  // 10000], got 0".
  double number(const std::string& key, double fallback, double min, double max);
  std::size_t count(const std::string& key, std::size_t fallback, std::size_t min, std::size_t max);
  std::string word(const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& allowed);
  // Throws UsageError naming unknown keys and the accepted ones.
  void check() const;
  // The options as given, "k=v,k=v" (empty when none).
  std::string text() const;

 private:
  std::string what_;  // "strategy 'anneal'"
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> known_;
};

// What a listing shows of a plug-in.
struct PluginDescription {
  std::string name;
  std::string description;
  std::string options;
};

// One plug-in: how it is named, what it does, its option grammar, and its factory.
template <class T>
struct RegistryEntry {
  std::string name;
  std::string description;
  std::string options;  // "t0=0.5 (initial temperature), alpha=0.98 (...)"; "none"
  std::function<std::unique_ptr<T>(SpecOptions&)> make;
};

// Plug-ins of one kind by name. make("name:key=value,...") parses the options, builds the
// plug-in and rejects options it did not read.
template <class T>
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(RegistryEntry<T> entry) {
    if (!entry.make) throw UsageError(kind_ + " '" + entry.name + "' needs a factory");
    for (const RegistryEntry<T>& e : entries_)
      if (e.name == entry.name)
        throw UsageError(kind_ + " '" + entry.name + "' is registered twice");
    entries_.push_back(std::move(entry));
  }

  // "name" or "name:key=value,key=value". An unknown name or option is a UsageError that says
  // what is accepted.
  std::unique_ptr<T> make(std::string_view spec) const {
    const std::size_t colon = spec.find(':');
    const std::string name(spec.substr(0, colon));
    const std::string_view text =
        colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
    for (const RegistryEntry<T>& e : entries_) {
      if (e.name != name) continue;
      SpecOptions options = SpecOptions::parse(kind_, name, text);
      std::unique_ptr<T> made = e.make(options);
      options.check();
      return made;
    }
    throw UsageError("unknown " + kind_ + " '" + name + "'; use one of " + names());
  }

  const std::vector<RegistryEntry<T>>& entries() const { return entries_; }
  std::vector<PluginDescription> describe() const {
    std::vector<PluginDescription> out;
    for (const RegistryEntry<T>& e : entries_) out.push_back({e.name, e.description, e.options});
    return out;
  }
  const std::string& kind() const { return kind_; }
  // "exhaustive, random, ..." for messages.
  std::string names() const {
    std::string out;
    for (const RegistryEntry<T>& e : entries_) out += (out.empty() ? "" : ", ") + e.name;
    return out;
  }

 private:
  std::string kind_;
  std::vector<RegistryEntry<T>> entries_;
};

}  // namespace tunekit
