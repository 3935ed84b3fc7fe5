#include "tuner/compile_pass.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "core/classify.hpp"

namespace tunekit::detail {

std::vector<BuildVerdict> build_all(std::vector<std::unique_ptr<Trial>>& trials, int threads,
                                    const std::function<double()>& now) {
  std::vector<BuildVerdict> verdicts(trials.size());
  std::atomic<std::size_t> next{0};
  std::mutex fatal_mutex;
  std::exception_ptr fatal;
  auto worker = [&] {
    for (std::size_t i = next++; i < trials.size(); i = next++) {
      const double start = now();
      try {
        verdicts[i].outcome = trials[i]->build();
      } catch (...) {
        try {
          verdicts[i].outcome =
              classify_exception(std::current_exception(), "build", Status::compile_failed);
        } catch (...) {  // fatal, or not ours to classify: rethrown on the caller's thread
          std::lock_guard lock(fatal_mutex);
          if (!fatal) fatal = std::current_exception();
          verdicts[i].outcome = {Status::compile_failed, "the build ended in a fatal error"};
        }
      }
      verdicts[i].seconds = now() - start;
    }
  };
  const int n =
      std::clamp<int>(threads, 1, static_cast<int>(std::max<std::size_t>(1, trials.size())));
  if (n <= 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  }  // joined here
  if (fatal) std::rethrow_exception(fatal);
  return verdicts;
}

}  // namespace tunekit::detail
