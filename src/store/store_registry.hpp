// The store kinds by name (STYLE "plug-ins by name"): one entry shape {name, description,
// options, open} and one parser of store specs, so `sqlite:PATH` and `postgresql://...` are
// told apart in one place (open_store_checked, the CLI's cache commands).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/store.hpp"

namespace tunekit::detail {

// How one kind of store is named and opened. `open` receives the spec's location: for a
// `url` kind the whole spec (libpq reads "postgresql://..." itself), else what follows
// "name:" ("sqlite:/a/b.db" -> "/a/b.db").
struct StoreKind {
  std::string name;
  std::string description;
  std::string options;  // the location's grammar, for listings and messages
  bool url = false;
  std::function<StoreOpening(const std::string& location, const StoreOptions&, const WarningSink&)>
      open;
};

// Every registered kind: sqlite, postgresql (and its alias postgres).
const std::vector<StoreKind>& store_kinds();

struct ParsedStoreSpec {
  const StoreKind* kind = nullptr;  // null: "none" or "memory" (no store)
  std::string location;
};

// The one parser of store specs. A spec naming no registered kind, or a kind without its
// location, is a UsageError listing what is accepted.
ParsedStoreSpec parse_store_spec(std::string_view spec);

// A URL with its secrets replaced by "***": the password of the user part, and every query
// parameter whose (percent-decoded) name ends in "password".
std::string mask_password(std::string_view url);
// `text` (a message from libpq, say) with `url`, and each of its secrets of 3 characters or
// more, replaced by the masked URL and "***".
std::string scrub_secrets(std::string_view text, std::string_view url);

}  // namespace tunekit::detail
