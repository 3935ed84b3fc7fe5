// The row shape both stores share (docs/formats.md): the columns of an entry, a ban and a
// pending miss, how a StoredChoice becomes column texts (the identity parts and the evidence
// as the codec's JSON text) and how a row read back becomes one. A `Row` is anything with
// text(column) and integer(column): an SQLite statement, a PostgreSQL result row.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "store/evidence_codec.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

// The columns put() writes, in this order; `stale` (read after them) is left to its default
// by a put: a new entry serves.
inline constexpr const char* kChoiceColumns =
    "identity_digest, op, key, key_digest, device, toolchain, environment, numerics_policy, "
    "candidates, winner, winner_config, evidence, measured, budget_cut, created_at, "
    "tunekit_version";
inline constexpr const char* kBanColumns = "identity_digest, op, key, candidate, reason, banned_at";
inline constexpr const char* kPendingColumns =
    "identity_digest, op, key, candidates, device, environment, numerics_policy, count, "
    "first_seen, last_seen";

inline std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The first twelve columns of kChoiceColumns as text (identity_digest .. evidence).
inline std::array<std::string, 12> choice_texts(const StoredChoice& c) {
  // The scope travels in the evidence's object form: no column, no schema change.
  return {c.identity_digest,
          c.op,
          c.key,
          c.key_digest,
          device_json(c.device),
          toolchain_json(c.toolchain),
          environment_json(c.environment),
          c.numerics_policy,
          c.candidates,
          c.winner,
          c.winner_config,
          evidence_text(c.evidence, c.search, c.scope)};
}

// A row of `SELECT kChoiceColumns, stale`.
template <class Row>
StoredChoice choice_from_row(Row& s) {
  StoredChoice c;
  c.identity_digest = s.text(0);
  c.op = s.text(1);
  c.key = s.text(2);
  c.key_digest = s.text(3);
  c.device = device_from_text(s.text(4));
  c.toolchain = toolchain_from_text(s.text(5));
  c.environment = environment_from_text(s.text(6));
  c.numerics_policy = s.text(7);
  c.candidates = s.text(8);
  c.winner = s.text(9);
  c.winner_config = s.text(10);
  DecodedEvidence evidence = evidence_from_text(s.text(11));
  c.evidence = std::move(evidence.candidates);
  c.search = std::move(evidence.search);
  c.scope = std::move(evidence.scope);
  c.measured = s.integer(12) != 0;
  c.budget_cut = s.integer(13) != 0;
  c.created_at = s.integer(14);
  c.tunekit_version = s.text(15);
  c.stale = s.text(16);
  return c;
}

// A row of `SELECT kBanColumns`.
template <class Row>
BannedCandidate ban_from_row(Row& s) {
  return {s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.integer(5)};
}

// A row of `SELECT kPendingColumns`.
template <class Row>
PendingMiss pending_from_row(Row& s) {
  return {s.text(0), s.text(1), s.text(2),    s.text(3),    s.text(4),
          s.text(5), s.text(6), s.integer(7), s.integer(8), s.integer(9)};
}

// An empty stale reason would read as "serves": the entry must stay stale.
inline std::string_view stale_reason(std::string_view reason) {
  return reason.empty() ? std::string_view("stale (no reason given)") : reason;
}

}  // namespace tunekit::detail
