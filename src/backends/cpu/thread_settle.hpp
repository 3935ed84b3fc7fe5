// Waiting out the threads a candidate leaves running. A library's worker threads keep spinning
// after its call returns (OpenBLAS for about 0.1 s, OMP_WAIT_POLICY=active runtimes for as long
// as they like) and take a core from whatever is timed next: a 2-thread kernel timed right after
// an OpenBLAS call read up to 2x slow (docs/performance.md "Why the bench's re-time disagreed").
// Before a window the CPU device waits until no other thread of this process is running.
#pragma once

#include <vector>

namespace tunekit::detail {

// Waits until no thread of this process but the caller is running (state R in
// /proc/self/task/<tid>/stat), for at most limit_seconds, polling every ~0.5 ms. A thread still
// running at the limit is no spinner winding down but a co-runner (an application's busy
// thread): its id goes into `co_runners` and later calls do not wait for it again (the run-queue
// wait accounts for its load). Returns the seconds waited; 0 at once where /proc cannot tell.
double settle_threads(double limit_seconds, std::vector<int>& co_runners);

// The ids of this process's threads other than the caller's that are running now; empty where
// /proc cannot tell.
std::vector<int> running_threads();

}  // namespace tunekit::detail
