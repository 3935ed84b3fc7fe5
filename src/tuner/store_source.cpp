#include "tuner/store_source.hpp"

#include "report/evidence_reader.hpp"
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
    request.stale = "the stored choice " + stored->winner + " is stale: " + stored->stale;
    return std::nullopt;
  }
  // A partial entry (a budget cut, a pruning strategy) serves a search that is restricted
  // too; a search without those limits replaces it (DESIGN §7).
  if (stored->budget_cut && !search_is_restricted(options_, op)) return std::nullopt;
  auto index = op.find(stored->winner);
  if (!index || bans_.banned(op.checksum(), request.key.digest(), *index)) return std::nullopt;
  if (auto checked = revalidator_.check(op, request.key, *index); checked && !checked->ok()) {
    const std::string why = "failed re-validation: " + std::string(to_string(checked->status)) +
                            ": " + checked->message;
    store_->mark_stale(digest, why);
    request.stale = "the stored choice " + stored->winner + " " + why;
    return std::nullopt;
  }
  request.report = brief_report(op, request.key, device_, options_, *index, Source::cache_replay,
                                "from " + store_->describe());
  fill_from_evidence(request.report, stored->evidence);
  return Served{*index, Source::cache_replay, false, true};
}

void StoreSource::record(ServeRequest& request, const Served& served) {
  if (!served.measured || !store_ || !device_.known) return;
  const TuneReport& r = request.report;
  store_->put(make_stored_choice(request.identity, r,
                                 request.op.candidate(served.index).config.text(), r.budget.cut));
}

}  // namespace tunekit::detail
