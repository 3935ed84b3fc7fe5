// The program cache: (source digest, options, device) -> program or the build's failure.
// Thread-safe for the parallel compile pass: the map is guarded by one mutex, held only to find
// or insert an entry; each entry has its own mutex, held across its one build, so different
// programs build concurrently and a second asker of the same program waits for the first
// build instead of starting another.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "tunekit/opencl.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::opencl {

struct CachingCompiler::Impl {
  using CacheKey = std::tuple<std::string, std::string, std::string>;  // digest, options, device
  struct Entry {
    std::mutex building;  // held across the build of this entry
    bool done = false;    // built, or failed with a classified error (remembered)
    std::optional<Program> program;
    Outcome failure;  // when done and program is empty
  };
  std::unique_ptr<Compiler> inner;
  std::string device;
  mutable std::mutex mutex;  // entries and hits
  std::map<CacheKey, std::shared_ptr<Entry>> entries;
  std::size_t hits = 0;
};

CachingCompiler::CachingCompiler(std::unique_ptr<Compiler> inner, std::string device_key)
    : impl_(std::make_unique<Impl>()) {
  impl_->inner = std::move(inner);
  impl_->device = std::move(device_key);
}

CachingCompiler::~CachingCompiler() = default;

Program CachingCompiler::build(std::string_view source, const std::string& options) {
  Impl::CacheKey key{Digest::of(source).hex(), options, impl_->device};
  std::shared_ptr<Impl::Entry> entry;
  {
    std::lock_guard lock(impl_->mutex);
    auto [it, inserted] = impl_->entries.try_emplace(std::move(key));
    if (inserted) it->second = std::make_shared<Impl::Entry>();
    entry = it->second;
  }
  std::lock_guard building(entry->building);  // waits while another thread builds this one
  if (entry->done) {
    {
      std::lock_guard lock(impl_->mutex);
      ++impl_->hits;
    }
    if (entry->program) return *entry->program;
    throw TrialError(entry->failure.status, entry->failure.message);
  }
  try {
    entry->program = impl_->inner->build(source, options);
  } catch (const TrialError& e) {
    entry->failure = {e.status(), e.what()};
    entry->done = true;
    throw;
  }  // anything else (fatal, bad_alloc) is not remembered: the next asker tries again
  entry->done = true;
  return *entry->program;
}

BuildStats CachingCompiler::stats() const {
  BuildStats s = impl_->inner->stats();
  std::lock_guard lock(impl_->mutex);
  s.hits = impl_->hits;
  return s;
}

}  // namespace tunekit::opencl
