// tunekit cache ls|show|rm|export|import: look at, prune, and move the stored choices.
//
//   tunekit cache ls [--op OP] [--json] [--pending]
//   tunekit cache show <digest|key>... [--json]
//   tunekit cache rm <digest|key|op>... | --all     (pending misses they name go too)
//   tunekit cache export --dir D [--op OP]
//   tunekit cache import D [--threads N]
//
// Every command takes --store SPEC (default: the environment's SQLite file, as `tune` uses).
// export and import are in cache_transfer.cpp, what they share with these in cache_common.hpp.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/cache_common.hpp"
#include "commands/commands.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit::cli {
namespace cache_cmd {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMinPrefix = 6;   // hex digits of a usable identity-digest prefix
constexpr std::size_t kDigestHex = 32;  // XXH3-128

// ---------------------------------------------------------------------------------------------
// Rendering stored choices

std::string iso_time(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  if (gmtime_r(&t, &utc) == nullptr) return std::to_string(unix_seconds);
  char text[32];
  if (std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
    return std::to_string(unix_seconds);
  return text;
}

// A JSON column kept as text in the store, embedded as JSON (kept as a string when it does
// not parse, so a damaged entry is still shown).
Json embedded(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Json(text);
  return j;
}

Json choice_json(const StoredChoice& c) {
  Json j;
  j["identity_digest"] = c.identity_digest;
  j["op"] = c.op;
  j["key"] = c.key;
  j["key_digest"] = c.key_digest;
  j["device"] = embedded(c.device);
  j["toolchain"] = embedded(c.toolchain);
  j["environment"] = embedded(c.environment);
  j["numerics_policy"] = c.numerics_policy;
  j["candidates"] = c.candidates;
  j["winner"] = c.winner;
  j["winner_config"] = c.winner_config;
  j["evidence"] = embedded(c.evidence);
  j["measured"] = c.measured;
  j["budget_cut"] = c.budget_cut;
  j["created_at"] = c.created_at;
  j["created"] = iso_time(c.created_at);
  j["tunekit_version"] = c.tunekit_version;
  j["stale"] = c.stale;  // empty: it serves
  return j;
}

Json ban_json(const BannedCandidate& b) {
  Json j;
  j["candidate"] = b.candidate;
  j["reason"] = b.reason;
  j["banned_at"] = b.banned_at;
  j["banned"] = iso_time(b.banned_at);
  return j;
}

Json pending_json(const PendingMiss& m) {
  Json j;
  j["identity_digest"] = m.identity_digest;
  j["op"] = m.op;
  j["key"] = m.key;
  j["candidates"] = m.candidates;
  j["device"] = embedded(m.device);
  j["environment"] = embedded(m.environment);
  j["numerics_policy"] = m.numerics_policy;
  j["count"] = m.count;
  j["first_seen_at"] = m.first_seen;
  j["first_seen"] = iso_time(m.first_seen);
  j["last_seen_at"] = m.last_seen;
  j["last_seen"] = iso_time(m.last_seen);
  return j;
}

// A plain table: the columns are as wide as their widest cell, two spaces apart. Cells come
// from the store, which anyone who could write it filled: they are escaped for the terminal.
void print_table(std::vector<std::vector<std::string>> rows, const std::string& indent) {
  for (auto& row : rows)
    for (std::string& cell : row) cell = terminal_safe(cell);
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << '\n';
  }
}

std::string seconds_text(double seconds) {
  if (!(seconds > 0)) return "-";
  if (seconds < 1e-6) return fmt::format("{:.1f} ns", seconds * 1e9);
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

std::string string_field(const Json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) return "";
  const Json& v = j.at(name);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

// "AMD EPYC 7B13 (cpu, AuthenticAMD, x86_64, 2 compute units, 8 GiB, ...)"
std::string device_text_of(const Json& d) {
  if (!d.is_object()) return d.is_string() ? d.get<std::string>() : d.dump();
  std::vector<std::string> parts;
  for (const char* name : {"backend", "vendor", "architecture"})
    if (auto v = string_field(d, name); !v.empty()) parts.push_back(v);
  if (d.contains("compute_units") && d["compute_units"].is_number_integer())
    parts.push_back(fmt::format("{} compute units", d["compute_units"].get<std::int64_t>()));
  auto bytes = [&](const char* name, const char* label) {
    if (d.contains(name) && d[name].is_number_unsigned() && d[name].get<std::uint64_t>() > 0) {
      const auto b = d[name].get<std::uint64_t>();
      parts.push_back(b >= (std::uint64_t{1} << 30)   ? fmt::format("{} {} GiB", label, b >> 30)
                      : b >= (std::uint64_t{1} << 20) ? fmt::format("{} {} MiB", label, b >> 20)
                                                      : fmt::format("{} {} KiB", label, b >> 10));
    }
  };
  bytes("memory_bytes", "memory");
  bytes("l1d_bytes", "L1d");
  bytes("l2_bytes", "L2");
  bytes("l3_bytes", "L3");
  if (auto v = string_field(d, "driver"); !v.empty()) parts.push_back("driver " + v);
  std::string text = string_field(d, "product");
  if (text.empty()) text = "(unknown product)";
  if (!parts.empty()) text += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
  return text;
}

std::string toolchain_text_of(const Json& t) {
  if (!t.is_object()) return t.is_string() ? t.get<std::string>() : t.dump();
  std::string text = "tunekit " + string_field(t, "tunekit_version");
  if (auto c = string_field(t, "compiler"); !c.empty()) text += ", " + c;
  if (t.contains("runtimes") && t["runtimes"].is_array()) {
    for (const Json& r : t["runtimes"])
      text += ", " + (r.is_string() ? r.get<std::string>() : r.dump());
  }
  return text;
}

std::string environment_text_of(const Json& e) {
  if (!e.is_object()) return e.is_string() ? e.get<std::string>() : e.dump();
  if (e.empty()) return "(no tags)";
  std::vector<std::string> tags;
  for (const auto& [name, value] : e.items())
    tags.push_back(name + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  return fmt::format("{}", fmt::join(tags, ", "));
}

// The median and the minimum of a candidate's timing: the stored statistics when present,
// else computed from the samples.
std::pair<double, double> median_and_min(const Json& timing, std::size_t& samples) {
  samples = 0;
  if (!timing.is_object()) return {0, 0};
  std::vector<double> values;
  if (timing.contains("samples") && timing["samples"].is_array()) {
    for (const Json& s : timing["samples"])
      if (s.is_number()) values.push_back(s.get<double>());
  }
  samples = values.size();
  auto number = [&](const char* name) -> std::optional<double> {
    if (timing.contains(name) && timing[name].is_number()) return timing[name].get<double>();
    return std::nullopt;
  };
  double median = 0;
  double minimum = 0;
  if (!values.empty()) {
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    median = values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    minimum = values.front();
  }
  return {number("median").value_or(median), number("min").value_or(minimum)};
}

void print_evidence(const StoredChoice& c) {
  Json evidence = embedded(c.evidence);
  // {"search": {...}, "candidates": [...]}; entries stored before the search record are a bare
  // array of candidates.
  if (evidence.is_object() && evidence.contains("candidates")) {
    const Json search = evidence.value("search", Json::object());
    if (search.is_object() && search.contains("strategy")) {
      std::cout << terminal_safe(fmt::format(
                       "  search       {} / {}, seed {}, {} of {} points, stopped by {}",
                       string_field(search, "strategy"), string_field(search, "schedule"),
                       string_field(search, "seed"), string_field(search, "evaluated"),
                       string_field(search, "space_size"), string_field(search, "stop_reason")))
                << '\n';
    }
    evidence = Json(evidence["candidates"]);
  }
  if (!evidence.is_array()) {
    std::cout << "  evidence     (unreadable: " << terminal_safe(c.evidence) << ")\n";
    return;
  }
  if (evidence.empty()) {
    std::cout << "  evidence     (none stored)\n";
    return;
  }
  std::cout << "  evidence:\n";
  std::vector<std::vector<std::string>> rows{
      {"candidate", "status", "median", "min", "samples", "message"}};
  for (const Json& e : evidence) {
    std::string name = string_field(e, "name");
    if (name == c.winner) name += " *";
    std::size_t samples = 0;
    const auto [median, minimum] =
        median_and_min(e.is_object() && e.contains("timing") ? e["timing"] : Json(), samples);
    rows.push_back({name, string_field(e, "status"), seconds_text(median), seconds_text(minimum),
                    samples ? std::to_string(samples) : "-", one_line(string_field(e, "message"))});
  }
  print_table(rows, "    ");
  std::cout << "    (* the winner)\n";
}

// Why the entry no longer serves, and the candidates that failed live for it.
void print_stale_and_bans(const StoredChoice& c, const std::vector<BannedCandidate>& bans) {
  if (!c.stale.empty()) {
    std::cout << "  stale: " << terminal_safe(one_line(c.stale))
              << "  (kept as evidence, not served)\n";
  }
  for (const BannedCandidate& b : bans) {
    std::cout << terminal_safe(fmt::format("  banned: {} \u2014 {}  ({})", b.candidate,
                                           one_line(b.reason), iso_time(b.banned_at)))
              << '\n';
  }
}

void print_choice(const StoredChoice& c, const std::vector<BannedCandidate>& bans) {
  std::cout << terminal_safe(fmt::format("{}  {}", c.op, c.key)) << '\n';
  std::vector<std::vector<std::string>> rows{
      {"identity", c.identity_digest},
      {"key digest", c.key_digest},
      {"winner", fmt::format("{}  ({})", c.winner, c.winner_config)},
      {"created", fmt::format("{}  by tunekit {}", iso_time(c.created_at), c.tunekit_version)},
      {"budget cut", c.budget_cut ? "yes (a later search without a budget replaces it)" : "no"},
      {"measured", c.measured ? "yes" : "no"},
      {"device", device_text_of(embedded(c.device))},
      {"toolchain", toolchain_text_of(embedded(c.toolchain))},
      {"environment", environment_text_of(embedded(c.environment))},
      {"numerics", c.numerics_policy},
      {"candidates", fmt::format("{} (candidate-set checksum)", c.candidates)},
  };
  print_table(rows, "  ");
  print_stale_and_bans(c, bans);
  print_evidence(c);
}

// ---------------------------------------------------------------------------------------------
// Finding entries by what the user typed

bool is_hex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
    return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
  });
}

std::string lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

// Compares a typed key with stored key texts: exactly, or after the entry's built-in op has
// parsed it (so `n=1000` finds `n=1000,dtype=f32`: defaults filled, fields ordered).
class KeyMatcher {
 public:
  bool matches(const StoredChoice& entry, const std::string& typed) {
    if (entry.key == typed) return true;
    if (typed.find('=') == std::string::npos) return false;
    const auto [it, inserted] = normalised_.try_emplace({entry.op, typed});
    if (inserted) it->second = normalise(entry.op, typed);
    return it->second && *it->second == entry.key;
  }

 private:
  std::optional<std::string> normalise(const std::string& op_name, const std::string& typed) {
    try {
      for (const CatalogEntry& e : builtin_ops()) {
        if (e.name != op_name) continue;
        if (!pool_) pool_ = std::make_unique<cpu::ThreadPool>(1);
        return e.make(*pool_)->parse_shape(typed).text();
      }
      return Key::parse(typed).text();
    } catch (const UsageError&) {
      return std::nullopt;
    }
  }

  std::unique_ptr<cpu::ThreadPool> pool_;
  std::map<std::pair<std::string, std::string>, std::optional<std::string>> normalised_;
};

// The entries one argument names: an identity digest (full, or a unique prefix of at least
// kMinPrefix hex digits), a key digest, a key text, or (with `ops`) an op name. An ambiguous
// prefix is a UsageError listing the entries it could mean.
std::vector<const StoredChoice*> resolve(const std::vector<StoredChoice>& entries,
                                         const std::string& what, bool ops, KeyMatcher& keys) {
  std::vector<const StoredChoice*> found;
  const bool hex = is_hex(what);
  const std::string digest = hex ? lower(what) : std::string();
  if (hex && digest.size() >= kMinPrefix && digest.size() < kDigestHex) {
    std::vector<const StoredChoice*> prefixed;
    for (const StoredChoice& e : entries)
      if (e.identity_digest.rfind(digest, 0) == 0) prefixed.push_back(&e);
    if (prefixed.size() > 1) {
      std::string list;
      for (const StoredChoice* e : prefixed)
        list += fmt::format("\n  {}  {}  {}", e->identity_digest, e->op, e->key);
      throw UsageError(fmt::format(
          "'{}' is ambiguous: {} stored choices have identity digests starting with it; give "
          "more digits:{}",
          what, prefixed.size(), list));
    }
  }
  for (const StoredChoice& e : entries) {
    const bool hit =
        (hex && digest.size() >= kMinPrefix && e.identity_digest.rfind(digest, 0) == 0) ||
        (hex && digest == e.key_digest) || (ops && e.op == what) || keys.matches(e, what);
    if (hit) found.push_back(&e);
  }
  return found;
}

std::string no_match_help(bool ops) {
  return fmt::format(
      "give an identity digest (or a prefix of at least {} hex digits), a key digest, {}a key "
      "such as n=1000,dtype=f32; 'tunekit cache ls' lists what is stored",
      kMinPrefix, ops ? "an op name, or " : "or ");
}

// ---------------------------------------------------------------------------------------------
// ls

// What stands between `cache ls` and a listing, with its exit status (docs/guide.md): 0 is a
// listing, an empty store or one not created yet.
struct LsRefusal {
  StoreState state;
  int status;
  const char* advice;
};
constexpr LsRefusal kLsRefusals[] = {
    {StoreState::locked, 5,
     "another process holds it: try again when it is done (TUNEKIT_STORE_WAIT_MS=MS waits "
     "longer)"},
    {StoreState::unreadable, 6,
     "you lack the permission: fix its mode or owner, or pass --store sqlite:PATH"},
    {StoreState::not_a_store, 7,
     "it is left as it is: move it aside (the next tune creates a new store) or pass --store "
     "sqlite:PATH"},
    {StoreState::newer_schema, 8,
     "list it with the tunekit that wrote it, or pass --store sqlite:PATH for a store of this "
     "version"},
    {StoreState::untrusted, 9,
     "another user could have planted its choices: fix the permissions, or set "
     "TUNEKIT_TRUST_STORE=1 to use it anyway"},
    {StoreState::not_a_file, 9, "remove what sits there, or pass --store sqlite:PATH"},
};

[[noreturn]] void refuse_ls(const OpenedStore& opened) {
  const LsRefusal* refusal = &kLsRefusals[std::size(kLsRefusals) - 1];
  for (const LsRefusal& r : kLsRefusals)
    if (r.state == opened.state) refusal = &r;
  std::cerr << fmt::format("tunekit: error: cannot list the store {}: it is {}; {}\n", opened.path,
                           opened.why, refusal->advice);
  throw CLI::RuntimeError(refusal->status);  // the status alone: the message is out
}

// ls --pending: the misses recorded for `tunekit tune --pending`.
void print_pending(const OpenedStore& opened, const std::vector<PendingMiss>& misses,
                   const CacheCommand& command) {
  if (command.json) {
    Json all = Json::array();
    for (const PendingMiss& m : misses) all.push_back(pending_json(m));
    std::cout << all.dump(2) << '\n';
    return;
  }
  if (misses.empty()) {
    std::cout << fmt::format("no pending misses in {}{}\n", opened.spec,
                             command.op.empty() ? "" : fmt::format(" for op {}", command.op));
    return;
  }
  std::vector<std::vector<std::string>> rows{
      {"op", "key", "count", "first seen", "last seen", "device", "identity"}};
  for (const PendingMiss& m : misses) {
    // tune --pending tunes only this machine's: the device says whose a record is.
    std::string device = string_field(embedded(m.device), "product");
    rows.push_back({m.op, m.key, std::to_string(m.count), iso_time(m.first_seen),
                    iso_time(m.last_seen), device.empty() ? "-" : device,
                    short_digest(m.identity_digest)});
  }
  print_table(rows, "");
  std::cout << fmt::format("{} pending miss{} in {} ('tunekit tune --pending' tunes them)\n",
                           misses.size(), misses.size() == 1 ? "" : "es", opened.spec);
}

void run_ls(const CacheCommand& command) {
  const OpenedStore opened = look_at_store(command);
  if (opened.state == StoreState::missing) {
    if (command.json) {
      std::cout << "[]\n";
    } else {
      std::cout << fmt::format(
          "no {}: the store {} does not exist yet (tunekit "
          "tune creates it)\n",
          command.pending ? "pending misses" : "choices stored", opened.path);
    }
    return;
  }
  if (!opened.store) refuse_ls(opened);
  if (command.pending) {
    print_pending(opened, opened.store->pending(command.op), command);
    return;
  }
  const std::vector<StoredChoice> entries = opened.store->list(command.op);
  if (command.json) {
    Json all = Json::array();
    for (const StoredChoice& c : entries) all.push_back(choice_json(c));
    std::cout << all.dump(2) << '\n';
    return;
  }
  const std::string read_only =
      opened.state == StoreState::read_only ? fmt::format(" (read-only: {})", opened.why) : "";
  if (entries.empty()) {
    std::cout << fmt::format("the store {} is empty{}{}\n", opened.spec,
                             command.op.empty() ? "" : fmt::format(" for op {}", command.op),
                             read_only);
    return;
  }
  std::vector<std::vector<std::string>> rows{
      {"op", "key", "winner", "created", "budget_cut", "identity"}};
  std::size_t stale = 0;
  for (const StoredChoice& c : entries) {
    stale += c.stale.empty() ? 0 : 1;
    rows.push_back({c.op, c.key, c.stale.empty() ? c.winner : c.winner + " (stale)",
                    iso_time(c.created_at), c.budget_cut ? "yes" : "no",
                    short_digest(c.identity_digest)});
  }
  print_table(rows, "");
  std::cout << fmt::format("{} stored choice{} in {}{}\n", entries.size(),
                           entries.size() == 1 ? "" : "s", opened.spec, read_only);
  if (stale > 0) {
    std::cout << fmt::format(
        "{} stale (kept as evidence, not served: 'tunekit cache show' says why)\n", stale);
  }
}

// ---------------------------------------------------------------------------------------------
// show

void run_show(const CacheCommand& command) {
  const OpenedStore opened = open_cache_store(command, /*create=*/false);
  Store& store = require_existing(opened);
  const std::vector<StoredChoice> entries = store.list();
  KeyMatcher keys;
  std::vector<const StoredChoice*> shown;
  std::set<std::string> seen;
  for (const std::string& what : command.what) {
    const auto found = resolve(entries, what, /*ops=*/false, keys);
    if (found.empty()) {
      throw UsageError(fmt::format("no stored choice matches '{}' in {}: {}", what, opened.spec,
                                   no_match_help(false)));
    }
    for (const StoredChoice* c : found)
      if (seen.insert(c->identity_digest).second) shown.push_back(c);
  }
  if (command.json) {
    Json all = Json::array();
    for (const StoredChoice* c : shown) {
      Json j = choice_json(*c);
      j["bans"] = Json::array();
      for (const BannedCandidate& b : store.bans(c->identity_digest))
        j["bans"].push_back(ban_json(b));
      all.push_back(std::move(j));
    }
    std::cout << all.dump(2) << '\n';
    return;
  }
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i > 0) std::cout << '\n';
    print_choice(*shown[i], store.bans(shown[i]->identity_digest));
  }
}

// ---------------------------------------------------------------------------------------------
// rm

// The identity digests (full, each once) of the entries and of the pending misses the
// arguments name, and the arguments that name neither.
struct Removal {
  std::vector<std::string> choices;
  std::vector<std::string> pending;
  std::vector<std::string> unmatched;
};

// Whether one argument names a pending miss: its op, its key (as `resolve` matches keys), or
// its identity digest (or a prefix of at least kMinPrefix hex digits).
bool names_pending(const PendingMiss& m, const std::string& what, KeyMatcher& keys) {
  const std::string digest = is_hex(what) ? lower(what) : std::string();
  if (m.op == what || (digest.size() >= kMinPrefix && m.identity_digest.rfind(digest, 0) == 0))
    return true;
  StoredChoice as_entry;  // the matcher reads the op and the key text
  as_entry.op = m.op;
  as_entry.key = m.key;
  return keys.matches(as_entry, what);
}

Removal what_to_remove(const CacheCommand& command, const std::vector<StoredChoice>& entries,
                       const std::vector<PendingMiss>& pending) {
  Removal r;
  std::set<std::string> seen;
  auto add = [&](std::vector<std::string>& to, const std::string& digest) {
    if (seen.insert(digest).second) to.push_back(digest);
  };
  KeyMatcher keys;
  for (const std::string& what : command.what) {
    const auto found = resolve(entries, what, /*ops=*/true, keys);
    for (const StoredChoice* c : found) add(r.choices, c->identity_digest);
    bool any = !found.empty();
    for (const PendingMiss& m : pending) {
      if (!names_pending(m, what, keys)) continue;
      add(r.pending, m.identity_digest);
      any = true;
    }
    if (!any) r.unmatched.push_back(what);
  }
  return r;
}

// cache rm: the entries named (with their bans and pending misses), and pending misses named
// by their op, key or digest even where nothing is stored for them; --all: everything.
void run_rm(const CacheCommand& command) {
  if (command.all == !command.what.empty()) {
    throw UsageError(command.all ? "give either what to remove or --all, not both"
                                 : "say what to remove (an identity digest or prefix, a key "
                                   "digest, a key or an op name), or --all");
  }
  const OpenedStore opened = open_cache_store(command, /*create=*/false, /*write=*/true);
  Store& store = require_existing(opened);
  const std::vector<StoredChoice> entries = store.list();
  const std::vector<PendingMiss> pending = store.pending();
  Removal r;
  if (command.all) {
    for (const StoredChoice& c : entries) r.choices.push_back(c.identity_digest);
    for (const PendingMiss& m : pending) r.pending.push_back(m.identity_digest);
    if (r.choices.empty() && r.pending.empty()) {
      std::cout << fmt::format("nothing to remove: the store {} is empty\n", opened.spec);
      return;
    }
  } else {
    r = what_to_remove(command, entries, pending);
    if (r.choices.empty() && r.pending.empty()) {
      std::string typed;
      for (const std::string& what : r.unmatched)
        typed += fmt::format("{}'{}'", typed.empty() ? "" : ", ", what);
      throw UsageError(
          fmt::format("nothing in {} matches {}: {}", opened.spec, typed, no_match_help(true)));
    }
    for (const std::string& what : r.unmatched)
      std::cerr << fmt::format("tunekit: warning: '{}' matches no stored choice\n", what);
  }
  std::size_t removed = 0, misses = 0;
  for (const std::string& digest : r.choices) removed += store.remove(digest);
  for (const std::string& digest : r.pending) misses += store.remove_pending(digest);
  std::cout << fmt::format(
      "removed {} stored choice{}{} from {}\n", removed, removed == 1 ? "" : "s",
      misses ? fmt::format(" and {} pending miss{}", misses, misses == 1 ? "" : "es") : "",
      opened.spec);
  if (removed + misses == 0) throw UsageError("nothing was removed (see the warning above)");
}

}  // namespace
}  // namespace cache_cmd

void register_cache(CLI::App& app) {
  using namespace cache_cmd;
  auto command = std::make_shared<CacheCommand>();
  CLI::App* cache = app.add_subcommand(
      "cache", "Look at, remove, export and import the stored choices (the tuning cache)");
  cache->require_subcommand(1);
  const std::string store_help =
      "The store: sqlite:PATH (default: choices.db under $TUNEKIT_CACHE_DIR, else "
      "$XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit)";

  CLI::App* ls = cache->add_subcommand("ls", "List the stored choices, one line each");
  ls->add_option("--op", command->op, "Only this op's choices");
  ls->add_flag("--json", command->json, "Every field of every entry as JSON");
  ls->add_option("--store", command->store, store_help);
  ls->add_flag("--pending", command->pending,
               "List the misses recorded in mode cached (op, key, count, last seen) instead: "
               "'tunekit tune --pending' tunes them");
  ls->footer(
      "Exit status: 0 listed, empty or not created yet; 5 locked by another process; 6 "
      "unreadable (permissions); 7 not a tunekit store or corrupt; 8 written by a newer "
      "tunekit; 9 refused (writable by others, another user's, or not a regular file).");
  ls->callback([command] { run_ls(*command); });

  CLI::App* show = cache->add_subcommand(
      "show", "Show stored choices in full: identity in clear and every candidate's reading");
  show->add_option("what", command->what,
                   "An identity digest (or a prefix of at least 6 hex digits), a key digest, or "
                   "a key")
      ->required();
  show->add_flag("--json", command->json, "Write the entries as JSON");
  show->add_option("--store", command->store, store_help);
  show->callback([command] { run_show(*command); });

  CLI::App* rm = cache->add_subcommand("rm", "Remove stored choices");
  rm->add_option("what", command->what,
                 "Identity digests (or prefixes of at least 6 hex digits), key digests, keys or "
                 "op names");
  rm->add_flag("--all", command->all, "Remove every stored choice and pending miss");
  rm->add_option("--store", command->store, store_help);
  rm->callback([command] { run_rm(*command); });

  CLI::App* exp = cache->add_subcommand(
      "export", "Write one deployable artifact per stored choice (see TUNEKIT_ARTIFACT_DIR)");
  exp->add_option("--dir", command->dir, "The directory to write the artifacts in")->required();
  exp->add_option("--op", command->op, "Only this op's choices");
  exp->add_option("--store", command->store, store_help);
  exp->callback([command] { run_export(*command); });

  CLI::App* imp = cache->add_subcommand(
      "import", "Store the choices of the artifacts (*.json) in a directory that fit this machine");
  imp->add_option("dir", command->dir, "The directory holding the artifacts")->required();
  imp->add_option("--threads,-t", command->threads,
                  "Worker threads the ops are built for, as given to 'tune' (0: one per core)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  imp->add_option("--store", command->store, store_help);
  imp->callback([command] { run_import(*command); });
}

}  // namespace tunekit::cli
