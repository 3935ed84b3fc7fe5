#include "commands/cache_common.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "commands/commands.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cli {

std::string resolve_store_spec(const std::string& given) {
  const auto getenv = [](const char* name) -> const char* { return std::getenv(name); };
  if (given == "sqlite") return "sqlite:" + default_store_path(getenv);
  if (given.empty()) return store_spec_from_environment(getenv);  // TUNEKIT_STORE, else SQLite
  return given;
}

namespace cache_cmd {

constexpr std::size_t kShortDigest = 12;  // what `ls` shows

namespace {

const char* read_env(const char* name) {
  return std::getenv(name);
}

OpenedStore open_by_spec(const CacheCommand& command, bool create, const WarningSink& warn) {
  OpenedStore opened;
  const std::string spec = resolve_store_spec(command.store);
  opened.spec = shown_store_spec(spec);  // messages and listings never show a password
  if (opened.spec == "none" || opened.spec == "memory") {
    throw UsageError(fmt::format(
        "--store {}: the cache commands work on a persistent store; use sqlite:PATH or leave "
        "--store out for the default file",
        opened.spec));
  }
  StoreOptions options = store_options_from_environment(read_env);
  options.create = create;
  try {
    opened.path = store_file_of(spec);                   // the SQLite file, or
    if (opened.path.empty()) opened.path = opened.spec;  // a server's URL
    StoreOpening o = open_store_checked(spec, options, warn);
    opened.store = std::move(o.store);
    opened.state = o.state;
    opened.why = std::move(o.why);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--store: {}", e.what()));
  }
  return opened;
}

}  // namespace

// Reads a typed key as a built-in op does (so `n=1000` finds `n=1000,dtype=f32`: defaults
// filled, fields ordered; a bucketed op's key finds its bucket's entry). The lookup itself is
// the library's (find_stored).
KeyCanonicaliser catalog_keys() {
  auto pool = std::make_shared<std::unique_ptr<cpu::ThreadPool>>();
  return
      [pool](const std::string& op_name, const std::string& typed) -> std::optional<std::string> {
        try {
          for (const CatalogEntry& e : builtin_ops()) {
            if (e.name != op_name) continue;
            if (!*pool) *pool = std::make_unique<cpu::ThreadPool>(1);
            const std::unique_ptr<OpBase> op = e.make(**pool);
            const Key key = op->parse_shape(typed);
            return (op->buckets() ? op->bucket_of(key) : key).text();
          }
          return Key::parse(typed).text();
        } catch (const UsageError&) {
          return std::nullopt;
        }
      };
}

OpenedStore look_at_store(const CacheCommand& command) {
  return open_by_spec(command, /*create=*/false, {});
}

OpenedStore open_cache_store(const CacheCommand& command, bool create, bool write) {
  OpenedStore opened = open_by_spec(command, create, command.log.warning_sink());
  if (opened.state == StoreState::missing) return opened;
  if (!opened.store) {
    throw UsageError(
        fmt::format("cannot use the store {} (see the warning above); pass --store sqlite:PATH "
                    "to use another file",
                    opened.spec));
  }
  if (write && opened.state == StoreState::read_only) {
    throw UsageError(fmt::format(
        "the store {} is read-only ({}): nothing can be changed in it; ask its owner, or pass "
        "--store sqlite:PATH to use a file you can write",
        opened.path, opened.why));
  }
  return opened;
}

Store& require_existing(const OpenedStore& opened) {
  if (!opened.store) {
    throw UsageError(fmt::format(
        "there is no store at {}: nothing has been tuned with it yet (set TUNEKIT_CACHE_DIR or "
        "pass --store sqlite:PATH to use another one)",
        opened.path));
  }
  return *opened.store;
}

std::string short_digest(const std::string& digest) {
  return digest.substr(0, std::min(digest.size(), kShortDigest));
}

}  // namespace cache_cmd
}  // namespace tunekit::cli
