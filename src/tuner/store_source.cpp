#include "tuner/store_source.hpp"

#include "report/tune_report.hpp"
#include "store/stored_choice.hpp"
#include "tuner/search.hpp"

namespace tunekit::detail {

std::optional<Served> StoreSource::find(ServeRequest& request) {
  if (!request.replay || !store_ || !device_.known) return std::nullopt;
  const OpBase& op = request.op;
  const std::string digest = request.identity.digest().hex();
  auto stored = store_->find(digest);
  if (!stored) return std::nullopt;
  if (!stored->stale.empty()) {
    append_stale(request, "the stored choice " + stored->winner + " is stale: " + stored->stale);
    return std::nullopt;
  }
  // A partial entry (a budget cut, a pruning strategy) serves a search that is restricted
  // too; a search without those limits replaces it (DESIGN §7).
  // Mode cached never searches: a partial entry is better than the default there.
  if (stored->budget_cut && options_.decide.mode != Mode::cached &&
      !search_is_restricted(options_, op, request.key))
    return std::nullopt;
  auto index = op.find(stored->winner);
  if (!index || bans_.banned(op.checksum(), request.key.digest(), *index) ||
      store_bans(*store_, digest, stored->winner))
    return std::nullopt;
  if (auto checked = revalidator_.check(op, request.key, *index); checked && !checked->ok()) {
    const std::string why = "failed re-validation: " + std::string(to_string(checked->status)) +
                            ": " + checked->message;
    // A wrong answer or a crash is the candidate's; a time or memory limit may be the
    // machine's at this moment: not served now, but not marked stale for good.
    if (!transient(checked->status)) store_->mark_stale(digest, why);
    append_stale(request, "the stored choice " + stored->winner + " " + why);
    return std::nullopt;
  }
  request.report = brief_report(op, request.key, device_, options_, *index, Source::cache_replay,
                                "from " + store_->describe());
  fill_from_evidence(request.report, stored->evidence);
  return Served{*index, Source::cache_replay, false, true};
}

void StoreSource::record(ServeRequest& request, const Served& served) {
  if (!served.measured || !store_ || !device_.known) return;
  TuneReport r = request.report;
  // The entry is the bucket's: cache show names the bucket it serves.
  if (request.op.buckets() && r.bucket.empty()) r.bucket = request.op.bucket_text(request.key);
  store_->put(make_stored_choice(request.identity, r,
                                 request.op.candidate(served.index).config.text(), r.budget.cut));
}

}  // namespace tunekit::detail
