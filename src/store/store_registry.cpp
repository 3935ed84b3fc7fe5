#include "store/store_registry.hpp"

#include "store/postgres_store.hpp"
#include "store/sqlite_store.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

std::vector<StoreKind> builtin_kinds() {
  const std::string pg_grammar =
      "postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DBNAME[?PARAM=VALUE&...]: libpq's URL (its "
      "parameters pass through), plus tunekit_schema=NAME (the PostgreSQL schema of the "
      "tables, default tunekit)";
  std::vector<StoreKind> kinds;
  kinds.push_back({"sqlite", "an embedded SQLite file (one machine, several processes)",
                   "sqlite:PATH", false, open_sqlite_store});
  kinds.push_back({"postgresql", "a PostgreSQL server shared by a fleet of machines", pg_grammar,
                   true, open_postgres_store});
  kinds.push_back({"postgres", "alias of postgresql", "as postgresql", true, open_postgres_store});
  return kinds;
}

std::string accepted() {
  return "use sqlite:PATH, postgresql://HOST/DBNAME, or none to keep choices in memory only";
}

}  // namespace

const std::vector<StoreKind>& store_kinds() {
  static const std::vector<StoreKind> kinds = builtin_kinds();
  return kinds;
}

ParsedStoreSpec parse_store_spec(std::string_view spec) {
  if (spec == "none" || spec == "memory") return {};
  const std::size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  for (const StoreKind& kind : store_kinds()) {
    if (colon == std::string_view::npos || kind.name != name) continue;
    const std::string_view rest = spec.substr(colon + 1);
    if (kind.url && (rest.substr(0, 2) != "//" || rest.size() == 2))
      throw UsageError("store '" + mask_password(spec) + "': write a URL, " + kind.options);
    if (!kind.url && rest.empty())
      throw UsageError("store '" + std::string(spec) + "' names no location: write " +
                       kind.options);
    return {&kind, std::string(kind.url ? spec : rest)};
  }
  throw UsageError("unknown store '" + mask_password(spec) + "': " + accepted());
}

std::string mask_password(std::string_view url) {
  std::string out(url);
  // The user part: scheme://user:password@host
  const std::size_t start = out.find("://");
  if (start != std::string::npos) {
    const std::size_t authority = start + 3;
    const std::size_t end = std::min(out.find_first_of("/?", authority), out.size());
    const std::size_t at = out.rfind('@', end - 1);
    if (at != std::string::npos && at >= authority && at < end) {
      const std::size_t colon = out.find(':', authority);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // A password= parameter of the query.
  const std::size_t query = out.find('?');
  if (query == std::string::npos) return out;
  for (std::size_t p = query; p != std::string::npos && p < out.size(); p = out.find('&', p + 1)) {
    const std::size_t name = p + 1;
    if (out.compare(name, 9, "password=") != 0) continue;
    const std::size_t value = name + 9;
    const std::size_t stop = std::min(out.find('&', value), out.size());
    out.replace(value, stop - value, "***");
  }
  return out;
}

}  // namespace tunekit::detail
