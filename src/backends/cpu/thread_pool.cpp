#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "backends/cpu/thread_placement.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cpu {

// One job at a time: callers queue on submit_; workers 0..helpers-1 join the job the caller
// publishes, everyone pulls task indices from one atomic counter.
//
// Waiting spins briefly before it blocks, on both sides (a helper for the next job, the
// caller for the helpers to finish). Blocking on every short job lets the scheduler wake a
// helper onto the caller's CPU (wake-affine) and keep it there: both threads of a 2-thread
// kernel then share one core, at 1-thread speed, for seconds — measured on a 2-core VM after
// the process had been idle (docs/performance.md "Why the bench's re-time disagreed"). A helper
// that is still spinning when the next job comes stays on its own CPU; one that blocked is
// often woken onto the caller's CPU all the same (13-15 of 20 windows after 20 ms idle on a
// 2-CPU VM, each job then 2x slow), so a helper that finds itself on the CPU the caller
// published the job from moves off it first while another CPU is idle (docs/performance.md "A
// library's restarted threads on the caller's CPU").
class ThreadPool::Impl {
 public:
  explicit Impl(int threads) : size_(threads) {
    try {
      for (int i = 0; i + 1 < size_; ++i) workers_.emplace_back([this, i] { work(i); });
    } catch (const std::system_error& e) {
      // The threads already started are stopped: a pool that cannot start is an error, not a
      // pool that waits forever for helpers that never came.
      stop();
      throw UsageError("ThreadPool: cannot start " + std::to_string(size_ - 1) +
                       " worker threads (" + e.what() +
                       "): ask for fewer threads or raise the process limit (ulimit -u)");
    }
  }

  ~Impl() { stop(); }

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
      const int helpers = std::min<int>(threads - 1, static_cast<int>(tasks) - 1);
      helpers_.store(helpers, std::memory_order_relaxed);
      busy_.store(helpers, std::memory_order_relaxed);
      error_ = nullptr;
      caller_cpu_ = ::sched_getcpu();
      generation_.fetch_add(1, std::memory_order_release);  // a spinning helper sees the job
    }
    wake_.notify_all();
    const Impl* outer = current_;
    current_ = this;
    run_tasks();
    current_ = outer;
    if (!spin_until([&] { return busy_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock lock(m_);
      done_.wait(lock, [&] { return busy_.load(std::memory_order_acquire) == 0; });
    }
    std::lock_guard lock(m_);  // the helpers' last writes (error_) happen before this
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Spins up to kSpin for `ready`; false when it never came (then the caller blocks).
  template <typename Ready>
  static bool spin_until(const Ready& ready) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    while (true) {
      for (int i = 0; i < 64; ++i) {
        if (ready()) return true;
        pause();
      }
      if (std::chrono::steady_clock::now() >= until) return ready();
      // A thread that shares this CPU (placed here before the load balancer moved it) gets
      // it: spinning in its way would be worse than blocking.
      std::this_thread::yield();
    }
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

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

  // A job for helper `id` that it has not run yet, or the pool is stopping.
  bool called(int id, std::uint64_t seen) const {
    return quit_.load(std::memory_order_acquire) ||
           (generation_.load(std::memory_order_acquire) != seen &&
            id < helpers_.load(std::memory_order_relaxed));
  }

  void work(int id) {
    current_ = this;
    std::uint64_t seen = 0;
    int avoid = -1;
    std::chrono::steady_clock::time_point ask_again{};
    while (true) {
      if (!spin_until([&] { return called(id, seen); })) {
        std::unique_lock lock(m_);
        wake_.wait(lock, [&] { return called(id, seen); });
      }
      {
        std::lock_guard lock(m_);  // the job's fields, as published under this lock
        if (quit_.load(std::memory_order_relaxed)) return;
        const std::uint64_t now = generation_.load(std::memory_order_relaxed);
        if (now == seen || id >= helpers_.load(std::memory_order_relaxed)) continue;
        seen = now;
        avoid = caller_cpu_;
      }
      // Sharing the caller's core would run this job at one thread's speed; moving onto a CPU
      // a co-runner holds would be worse (its time slices), so only while one is idle. Where
      // that or the move fails, not asked again for 10 ms: a helper that cannot move (a mask
      // of one CPU, a busy machine) must not pay two system calls on every job.
      if (avoid >= 0 && ::sched_getcpu() == avoid) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= ask_again && !(detail::idle_cpu_likely() && detail::move_off_cpu(0, avoid, id)))
          ask_again = now + kRecheck;
      }
      run_tasks();
      {
        std::lock_guard lock(m_);
        if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
      }
    }
  }

  void stop() {
    {
      std::lock_guard lock(m_);
      quit_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  // How long a waiting thread spins before it blocks: longer than the gap between two
  // launches of a timing window or a caller's loop, short enough not to matter when idle.
  static constexpr std::chrono::microseconds kSpin{200};
  // How long a helper on its caller's CPU stays there once it could not move off.
  static constexpr std::chrono::milliseconds kRecheck{10};

  static thread_local const Impl* current_;

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex submit_;
  std::mutex m_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<bool> quit_{false};
  std::atomic<std::uint64_t> generation_{0};
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t tasks_ = 0;
  int caller_cpu_ = -1;  // where the job was published from (-1: unknown)
  std::atomic<std::size_t> next_{0};
  std::atomic<int> helpers_{0};
  std::atomic<int> busy_{0};
  std::exception_ptr error_;
};

thread_local const ThreadPool::Impl* ThreadPool::Impl::current_ = nullptr;

namespace {

// Bumped in the child of every fork(): a pool made before the fork has no threads there (only
// the forking thread survives fork), so it starts new ones on first use (a worker process
// times candidates with the same thread count as the host). A process-wide fact, hence global.
std::atomic<unsigned> fork_generation{0};

void count_forks() {
  static std::once_flag once;
  std::call_once(once,
                 [] { ::pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1); }); });
}

int resolve_threads(int threads) {
  if (threads < 0) throw UsageError("ThreadPool: threads must be >= 0 (0 means one per core)");
  if (threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(threads, 1);
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  count_forks();
  generation_ = fork_generation.load();
  impl_ = std::make_unique<Impl>(resolve_threads(threads));
}
ThreadPool::~ThreadPool() = default;
int ThreadPool::size() const {
  return impl_->size();
}
void ThreadPool::parallel_for(std::size_t tasks, int threads,
                              const std::function<void(std::size_t)>& fn) {
  if (generation_ != fork_generation.load(std::memory_order_relaxed)) respawn();
  impl_->parallel_for(tasks, threads, fn);
}

void ThreadPool::respawn() {
  // In a forked child: the old pool's threads do not exist and its locks may have been held
  // by them at the fork, so it is abandoned (never touched, never destroyed) and a new one
  // of the same size started.
  static std::mutex respawning;
  std::lock_guard lock(respawning);
  const unsigned now = fork_generation.load();
  if (generation_ == now) return;
  const int size = impl_->size();
  (void)impl_.release();
  impl_ = std::make_unique<Impl>(size);
  generation_ = now;
}

}  // namespace tunekit::cpu
