#include "tuner/default_source.hpp"

namespace tunekit::detail {

std::optional<Served> DefaultSource::find(ServeRequest& request) {
  const std::size_t fallback = request.op.default_index(request.key);
  Source source = Source::use_default;
  std::string reason = "no choice is known";
  if (options_.decide.mode == Mode::cached && !request.search_now) {
    source = request.stale.empty() ? Source::search_disabled : Source::stale_replay;
    reason = request.stale.empty() ? "mode is cached and no choice is known"
                                   : "mode is cached and the known choice no longer serves";
    record_miss(request);
  }
  request.report =
      brief_report(request.op, request.key, device_, options_, fallback, source, reason);
  return Served{fallback, source, false, false};
}

void DefaultSource::record_miss(const ServeRequest& request) {
  if (!store_ || !device_.known) return;
  const std::string digest = request.identity.digest().hex();
  {
    std::lock_guard lock(mutex_);
    if (!recorded_.insert(digest).second) return;  // a hot loop records its miss once
  }
  store_->record_miss(make_pending_miss(request.identity));
}

}  // namespace tunekit::detail
