#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cpu {

// One job at a time: callers queue on submit_; workers 0..helpers-1 join the job the caller
// publishes, everyone pulls task indices from one atomic counter.
class ThreadPool::Impl {
 public:
  explicit Impl(int threads) : size_(threads) {
    for (int i = 0; i + 1 < size_; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  ~Impl() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int size() const { return size_; }

  void parallel_for(std::size_t tasks, int threads, const std::function<void(std::size_t)>& fn) {
    if (tasks == 0) return;
    threads = std::clamp(threads, 1, size_);
    if (threads == 1 || tasks == 1 || current_ == this) {
      for (std::size_t t = 0; t < tasks; ++t) fn(t);
      return;
    }
    std::lock_guard submit(submit_);
    {
      std::lock_guard lock(m_);
      fn_ = &fn;
      tasks_ = tasks;
      next_.store(0, std::memory_order_relaxed);
      helpers_ = std::min<int>(threads - 1, static_cast<int>(tasks) - 1);
      busy_ = helpers_;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    const Impl* outer = current_;
    current_ = this;
    run_tasks();
    current_ = outer;
    std::unique_lock lock(m_);
    done_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_tasks() {
    for (std::size_t t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < tasks_;) {
      try {
        (*fn_)(t);
      } catch (...) {
        std::lock_guard lock(m_);
        if (!error_) error_ = std::current_exception();
        next_.store(tasks_, std::memory_order_relaxed);  // skip what is left
      }
    }
  }

  void work(int id) {
    current_ = this;
    std::uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock lock(m_);
        wake_.wait(lock, [&] { return quit_ || (generation_ != seen && id < helpers_); });
        if (quit_) return;
        seen = generation_;
      }
      run_tasks();
      {
        std::lock_guard lock(m_);
        if (--busy_ == 0) done_.notify_one();
      }
    }
  }

  static thread_local const Impl* current_;

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex submit_;
  std::mutex m_;
  std::condition_variable wake_;
  std::condition_variable done_;
  bool quit_ = false;
  std::uint64_t generation_ = 0;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t tasks_ = 0;
  std::atomic<std::size_t> next_{0};
  int helpers_ = 0;
  int busy_ = 0;
  std::exception_ptr error_;
};

thread_local const ThreadPool::Impl* ThreadPool::Impl::current_ = nullptr;

namespace {
int resolve_threads(int threads) {
  if (threads < 0) throw UsageError("ThreadPool: threads must be >= 0 (0 means one per core)");
  if (threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(threads, 1);
}
}  // namespace

ThreadPool::ThreadPool(int threads) : impl_(std::make_unique<Impl>(resolve_threads(threads))) {}
ThreadPool::~ThreadPool() = default;
int ThreadPool::size() const {
  return impl_->size();
}
void ThreadPool::parallel_for(std::size_t tasks, int threads,
                              const std::function<void(std::size_t)>& fn) {
  impl_->parallel_for(tasks, threads, fn);
}

}  // namespace tunekit::cpu
