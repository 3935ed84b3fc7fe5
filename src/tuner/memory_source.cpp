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
  if (served.publish) publish(request.op.checksum(), request.key.digest(), served.index);
}

}  // namespace tunekit::detail
