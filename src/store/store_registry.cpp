#include "store/store_registry.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// Where a URL's secrets sit, as [begin, end) ranges of its text: the password of the user
// part (scheme://user:PASSWORD@host; the user part ends at the last '@' before the first '/',
// so a raw '?' or ':' in a password is still covered) and the value of every query parameter
// whose name, percent-decoded and in any case, ends in "password" (password=, sslpassword=).
std::vector<std::pair<std::size_t, std::size_t>> secret_ranges(std::string_view url) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const std::size_t start = url.find("://");
  if (start != std::string_view::npos) {
    const std::size_t authority = start + 3;
    const std::size_t slash = std::min(url.find('/', authority), url.size());
    const std::size_t at = url.substr(0, slash).rfind('@');
    if (at != std::string_view::npos && at >= authority) {
      const std::size_t colon = url.find(':', authority);
      if (colon < at) out.emplace_back(colon + 1, at);
    }
  }
  const std::size_t query = url.find('?');
  if (query == std::string_view::npos) return out;
  for (std::size_t p = query; p < url.size(); p = url.find('&', p + 1)) {
    const std::size_t name = p + 1;
    const std::size_t equals = url.find('=', name);
    const std::size_t stop = std::min(url.find('&', name), url.size());
    if (equals >= stop) continue;
    std::string decoded;
    for (std::size_t i = name; i < equals; ++i) {
      char c = url[i];
      if (c == '%' && i + 2 < equals && std::isxdigit(static_cast<unsigned char>(url[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(url[i + 2]))) {
        c = static_cast<char>(std::stoi(std::string(url.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      }
      decoded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    constexpr std::string_view kPassword = "password";
    if (decoded.size() >= kPassword.size() &&
        decoded.compare(decoded.size() - kPassword.size(), kPassword.size(), kPassword) == 0)
      out.emplace_back(equals + 1, stop);
  }
  return out;
}

}  // namespace

std::string mask_password(std::string_view url) {
  std::string out(url);
  auto ranges = secret_ranges(url);
  // From the last to the first, so earlier offsets stay valid.
  std::sort(ranges.begin(), ranges.end());
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
    out.replace(it->first, it->second - it->first, "***");
  return out;
}

std::string scrub_secrets(std::string_view text, std::string_view url) {
  std::string out(text);
  auto replace_all = [&out](std::string_view what, std::string_view with) {
    if (what.empty()) return;
    for (std::size_t at = out.find(what); at != std::string::npos;
         at = out.find(what, at + with.size()))
      out.replace(at, what.size(), with);
  };
  // The whole URL first (libpq quotes it in some messages), then each secret alone (it quotes
  // single tokens in others, e.g. a bad percent-encoding).
  const std::string masked = mask_password(url);
  if (masked != url) replace_all(url, masked);
  for (const auto& [begin, end] : secret_ranges(url))
    if (end - begin >= 3) replace_all(url.substr(begin, end - begin), "***");
  return out;
}

}  // namespace tunekit::detail
