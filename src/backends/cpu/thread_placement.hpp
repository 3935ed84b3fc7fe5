// Moving a thread off a CPU (tunekit::cpu::spread_threads, and the thread pool's helpers woken
// onto their caller's CPU).
#pragma once

#include <cstddef>

namespace tunekit::detail {

// Moves thread `tid` (0: the calling thread) off CPU `avoid`: for nth 0 onto whichever other
// CPU of its own mask the kernel picks, else onto the nth (modulo their count) of them, so
// threads spread together land apart; then gives it its mask back: the scheduler stays free to
// move it, and has no reason to. False where its mask holds no other CPU, `avoid` is unknown
// (-1), or the thread ended or may not be moved.
bool move_off_cpu(int tid, int avoid, std::size_t nth);

// Whether a CPU of this machine is likely idle now: no more runnable threads, system-wide, than
// online CPUs (/proc/loadavg's running count; the caller and the thread asking among them). A
// thread moved onto a CPU a co-runner holds waits out the co-runner's time slices, which is far
// worse than sharing its caller's. False where /proc cannot tell, and where this process may
// run on only some of the online CPUs (the count is the whole machine's: a cpuset container).
bool idle_cpu_likely();

}  // namespace tunekit::detail
