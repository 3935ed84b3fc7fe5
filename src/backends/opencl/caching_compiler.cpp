// The program cache: (source digest, options, device) -> program or the build's failure.
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "tunekit/opencl.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::opencl {

struct CachingCompiler::Impl {
  using CacheKey = std::tuple<std::string, std::string, std::string>;  // digest, options, device
  struct Entry {
    std::optional<Program> program;
    Outcome failure;  // when program is empty
  };
  std::unique_ptr<Compiler> inner;
  std::string device;
  std::mutex mutex;
  std::map<CacheKey, Entry> entries;
  std::size_t hits = 0;
};

CachingCompiler::CachingCompiler(std::unique_ptr<Compiler> inner, std::string device_key)
    : impl_(std::make_unique<Impl>()) {
  impl_->inner = std::move(inner);
  impl_->device = std::move(device_key);
}

CachingCompiler::~CachingCompiler() = default;

Program CachingCompiler::build(std::string_view source, const std::string& options) {
  // Held across the build: two threads asking for one program build it once.
  std::lock_guard lock(impl_->mutex);
  Impl::CacheKey key{Digest::of(source).hex(), options, impl_->device};
  if (auto it = impl_->entries.find(key); it != impl_->entries.end()) {
    ++impl_->hits;
    if (it->second.program) return *it->second.program;
    throw TrialError(it->second.failure.status, it->second.failure.message);
  }
  Impl::Entry entry;
  try {
    entry.program = impl_->inner->build(source, options);
  } catch (const TrialError& e) {
    entry.failure = {e.status(), e.what()};
    impl_->entries.emplace(std::move(key), std::move(entry));
    throw;
  }
  Program program = *entry.program;
  impl_->entries.emplace(std::move(key), std::move(entry));
  return program;
}

BuildStats CachingCompiler::stats() const {
  std::lock_guard lock(impl_->mutex);
  BuildStats s = impl_->inner->stats();
  s.hits = impl_->hits;
  return s;
}

}  // namespace tunekit::opencl
