// How long this process's threads have waited for a CPU (run-queue delay), summed over its
// threads, from /proc/self/task/<tid>/schedstat. A timing window that grows across a reading
// was stretched by the scheduler, not by the kernel: another process took the core, or the
// candidate's own threads outnumbered the free cores and did not run at once.
#pragma once

#include <chrono>
#include <vector>

namespace tunekit::detail {

class RunQueueWait {
 public:
  RunQueueWait() = default;
  ~RunQueueWait();
  RunQueueWait(const RunQueueWait&) = delete;
  RunQueueWait& operator=(const RunQueueWait&) = delete;

  // Notes how long each thread has waited so far (reading the task list again when due, or
  // at once when the process has more or fewer threads than the list).
  void start();
  // Seconds the threads noted by start() have waited since, summed; -1 when the kernel does
  // not tell (no /proc, schedstat not built in), start() was not called in this process, or
  // threads came or went since start(): a thread started during the reading (a pool's, a
  // library's first call) waits unseen, so such a reading is never known not to have waited.
  double since_start();

 private:
  void rescan();
  void close_all();
  long thread_count() const;  // the process's threads now (/proc/self/stat); -1: unreadable

  std::vector<int> fds_;             // one open schedstat file per thread
  std::vector<long long> at_start_;  // each thread's wait at start(), ns (-1: unreadable)
  int stat_fd_ = -1;                 // /proc/self/stat of the process the files belong to
  long threads_at_start_ = -1;       // thread_count() at start() when the list held them all
  int pid_ = -1;                     // the process the files belong to (a fork child rescans)
  std::chrono::steady_clock::time_point scanned_{};
  bool unavailable_ = false;
};

}  // namespace tunekit::detail
