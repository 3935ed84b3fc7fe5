#include <algorithm>
#include <atomic>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {

CacheEvictor::CacheEvictor(std::size_t bytes) : bytes_(std::max<std::size_t>(bytes, 64)) {}

void CacheEvictor::evict() {
  if (!buffer_) {
    buffer_.reset(new unsigned char[bytes_]);
    std::fill_n(buffer_.get(), bytes_, 0);
  }
  // Touch one byte per cache line with a changing value so every line is written back.
  ++round_;
  for (std::size_t i = 0; i < bytes_; i += 64)
    buffer_[i] = static_cast<unsigned char>(buffer_[i] + round_);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // keep the writes
}

}  // namespace tunekit::cpu
