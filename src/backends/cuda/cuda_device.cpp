// CudaDevice: trials whose queued batches replay a CUDA graph, and the L2 evictor.
#include <map>

#include "backends/cuda/context_impl.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {
namespace {

bool device_gone(Status status) {
  return status == Status::device_lost || status == Status::timed_out;
}

// build is the op's build step, launch the candidate's enqueue, sync waits for the stream; a
// batch of `count` launches is captured once into a graph and replayed.
class CudaTrial final : public Trial {
 public:
  CudaTrial(Workload& workload, std::size_t index, Context& context)
      : workload_(workload), index_(index), context_(context) {}
  ~CudaTrial() override { release(); }
  CudaTrial(const CudaTrial&) = delete;
  CudaTrial& operator=(const CudaTrial&) = delete;

  Outcome build() override { return workload_.build_candidate(index_); }
  Outcome prepare() override { return Outcome::success(); }
  void launch() override { workload_.run_candidate(index_); }
  void launch_batch(int count) override {
    if (count <= 0) return;
    auto it = graphs_.find(count);
    // Captured before the window's first enqueue, so the capture is not in the reading.
    if (it == graphs_.end()) it = graphs_.emplace(count, capture(count)).first;
    context_.launch_graph(it->second);
  }
  void sync() override { context_.synchronize(); }
  void release() override {
    for (auto& [count, exec] : graphs_) context_.destroy_graph(exec);
    graphs_.clear();
  }

 private:
  void* capture(int count) {
    context_.begin_capture();
    try {
      for (int i = 0; i < count; ++i) workload_.run_candidate(index_);
    } catch (const std::exception& e) {
      abandon_capture();
      refuse(count, e);
    } catch (...) {
      abandon_capture();
      throw;
    }
    try {
      return context_.end_capture();
    } catch (const std::exception& e) {
      refuse(count, e);
    }
  }

  void abandon_capture() {
    try {
      context_.destroy_graph(context_.end_capture());
    } catch (const std::exception&) {  // the capture was broken: nothing to keep
    }
  }

  [[noreturn]] static void refuse(int count, const std::exception& e) {
    if (auto* t = dynamic_cast<const TrialError*>(&e); t && device_gone(t->status())) throw;
    throw TrialError(Status::launch_failed,
                     "capturing " + std::to_string(count) + " launches into a CUDA graph failed (" +
                         e.what() +
                         "): a CUDA candidate must only enqueue work on the context's stream "
                         "(no host copies, synchronisation or allocation when it launches)");
  }

  Workload& workload_;
  std::size_t index_;
  Context& context_;
  std::map<int, void*> graphs_;  // batch size -> CUgraphExec
};

std::shared_ptr<Context> required(std::shared_ptr<Context> context) {
  if (!context) throw UsageError("CudaDevice needs a context: cuda::Context::open(...)");
  return context;
}

}  // namespace

// L2Evictor ------------------------------------------------------------------------------------

L2Evictor::L2Evictor(std::shared_ptr<Context> context) : context_(required(std::move(context))) {
  // Twice the L2, so nothing a sample left there survives the flush.
  if (const std::uint64_t l2 = context_->info().l2_bytes; l2 > 0)
    buffer_ = Buffer(*context_, static_cast<std::size_t>(2 * l2));
}

void L2Evictor::evict() {
  if (buffer_.bytes() == 0) return;
  auto& impl = detail::ContextAccess::impl(*context_);
  impl.throw_if_lost();
  impl.make_current();
  impl.check(impl.api->memset_d32_async(static_cast<CUdeviceptr>(buffer_.device_pointer()), 0u,
                                        buffer_.bytes() / 4, impl.stream),
             "cuMemsetD32Async (L2 flush)");
}

// CudaDevice -----------------------------------------------------------------------------------

CudaDevice::CudaDevice(std::shared_ptr<Context> context)
    : context_(required(std::move(context))), clock_(context_), evictor_(context_) {}

std::unique_ptr<Trial> CudaDevice::make_trial(Workload& workload, std::size_t index) {
  return std::make_unique<CudaTrial>(workload, index, *context_);
}

}  // namespace tunekit::cuda
