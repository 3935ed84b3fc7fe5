#include "tuner/memory_source.hpp"

namespace tunekit::detail {

std::optional<Served> MemorySource::find(ServeRequest& request) {
  if (request.search_now) return std::nullopt;
  auto index = hit(request.op.checksum(), request.key.digest());
  if (!index) return std::nullopt;
  request.report =
      brief_report(request.op, request.key, device_, options_, *index, Source::memory_hit, {});
  return Served{*index, Source::memory_hit, false, false};
}

void MemorySource::record(ServeRequest& request, const Served& served) {
  if (served.publish) publish(request.op, request.key, served.index);
}

void MemorySource::publish(const OpBase& op, const Key& key, std::size_t index) {
  table_.publish(op.checksum(), key.digest(), index);
  // The hot digest is of the key's own values: a bucket's representative gets an entry for its
  // own sizes only, never for another size of its bucket.
  if (const std::optional<Digest> values = op.hot_digest(key))
    hot_.publish(op.checksum(), *values, index);
}

}  // namespace tunekit::detail
