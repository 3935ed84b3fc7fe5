#include "tuner/model_source.hpp"

namespace tunekit::detail {

std::optional<std::size_t> ModelSource::pick(const OpBase& op, const Key& key,
                                             const std::string& identity_digest) {
  if (!options_.model.serve || options_.decide.mode == Mode::off) return std::nullopt;
  const ModelReport m = model_decide(op, key, envelopes_(), options_);
  if (m.source != Source::model) return std::nullopt;
  if (m.winner == op.default_index(key)) return m.winner;
  // A candidate that failed live is never served again for the key (DESIGN §7).
  if (banned(op, key, identity_digest, m.winner)) return std::nullopt;
  // The model's pick has never been run: correct before fast, as for a replayed choice.
  if (auto checked = revalidator_.check(op, key, m.winner); checked && !checked->ok())
    return std::nullopt;
  return m.winner;
}

bool ModelSource::banned(const OpBase& op, const Key& key, const std::string& identity_digest,
                         std::size_t index) const {
  const Key stored = op.buckets() ? op.bucket_of(key) : key;  // bans are the bucket's
  if (bans_.banned(op.checksum(), stored.digest(), index)) return true;
  return store_ && device_.known && store_bans(*store_, identity_digest, op.candidate(index).name);
}

std::optional<Served> ModelSource::find(ServeRequest& request) {
  if (request.search_now || options_.decide.mode != Mode::cached) return std::nullopt;
  // A model that declines, or a pick that fails validation, leaves the default to answer.
  const std::optional<std::size_t> index =
      pick(request.op, request.key, request.identity.digest().hex());
  if (!index) return std::nullopt;
  pending_.record_miss(request);  // a guess, not a measurement: tune it later
  request.report = brief_report(request.op, request.key, device_, options_, *index, Source::model,
                                "mode is cached and no choice is known: the cost model's pick "
                                "(nothing measured, nothing stored)");
  return Served{*index, Source::model, false, false};
}

}  // namespace tunekit::detail
