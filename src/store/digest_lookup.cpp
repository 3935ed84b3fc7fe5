// Finding stored choices by what a user typed: a digest or a prefix of one, an op name, a key
// (store.hpp).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include <fmt/format.h>

#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit {
namespace {

constexpr std::size_t kDigestHex = 32;  // XXH3-128

// The typed text as lower-case hex, or empty when it is not hex.
std::string hex_of(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (std::isxdigit(static_cast<unsigned char>(ch)) == 0) return {};
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool names_identity(std::string_view identity_digest, std::string_view what) {
  const std::string digest = hex_of(what);
  return digest.size() >= kMinDigestPrefix && starts_with(identity_digest, digest);
}

std::vector<const StoredChoice*> find_by_digest(const std::vector<StoredChoice>& entries,
                                                std::string_view what) {
  const std::string digest = hex_of(what);
  std::vector<const StoredChoice*> found;
  if (digest.empty()) return found;
  for (const StoredChoice& e : entries)
    if (names_identity(e.identity_digest, digest) || e.key_digest == digest) found.push_back(&e);
  // A short prefix may name several entries: the user must say which (a full digest is exact).
  const auto prefixed = std::count_if(found.begin(), found.end(), [&](const StoredChoice* e) {
    return names_identity(e->identity_digest, digest);
  });
  if (digest.size() < kDigestHex && prefixed > 1) {
    std::string list;
    for (const StoredChoice* e : found)
      if (names_identity(e->identity_digest, digest))
        list += fmt::format("\n  {}  {}  {}", e->identity_digest, e->op, e->key);
    throw UsageError(fmt::format(
        "'{}' is ambiguous: {} stored choices have identity digests starting with it; give more "
        "digits:{}",
        what, prefixed, list));
  }
  return found;
}

bool names_key(const std::string& op, const std::string& stored_key, const std::string& typed,
               const KeyCanonicaliser& canonical) {
  if (stored_key == typed) return true;
  if (!canonical || typed.find('=') == std::string::npos) return false;
  const std::optional<std::string> text = canonical(op, typed);
  return text && *text == stored_key;
}

std::vector<const StoredChoice*> find_stored(const std::vector<StoredChoice>& entries,
                                             const std::string& what, const StoredLookup& how) {
  std::vector<const StoredChoice*> found;
  if (how.digests) {
    for (const StoredChoice* e : find_by_digest(entries, what))
      if (how.op.empty() || e->op == how.op) found.push_back(e);
  }
  // The typed key read once per op, not once per entry.
  std::map<std::string, std::optional<std::string>> canonical;
  auto key_matches = [&](const StoredChoice& e) {
    if (e.key == what) return true;
    if (!how.canonical || what.find('=') == std::string::npos) return false;
    auto [it, inserted] = canonical.try_emplace(e.op);
    if (inserted) it->second = how.canonical(e.op, what);
    return it->second && *it->second == e.key;
  };
  for (const StoredChoice& e : entries) {
    if (!how.op.empty() && e.op != how.op) continue;
    const bool hit = (how.ops && e.op == what) || key_matches(e);
    if (hit && std::find(found.begin(), found.end(), &e) == found.end()) found.push_back(&e);
  }
  return found;
}

}  // namespace tunekit
