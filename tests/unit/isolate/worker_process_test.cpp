// Tests for src/isolate/: the worker process and the answer's encoding.
#include "isolate/worker_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>
#include <vector>

#include "isolate/trial_messages.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

using Kind = WorkerResult::Kind;

TEST(WorkerProcess, AnswersWhatTheWorkReturns) {
  int host_value = 1;
  WorkerResult r = run_in_worker(
      [&] {
        host_value = 2;  // the worker's copy: the host never sees it
        return std::string("hello\0world", 11);
      },
      5);
  ASSERT_EQ(r.kind, Kind::answered) << r.message;
  EXPECT_EQ(r.answer, std::string("hello\0world", 11));
  EXPECT_EQ(host_value, 1);
}

TEST(WorkerProcess, ASignalOrAnExitIsACrashWithItsCause) {
  WorkerResult r = run_in_worker(
      []() -> std::string {
        ::raise(SIGSEGV);
        return "unreachable";
      },
      5);
  EXPECT_EQ(r.kind, Kind::crashed);
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reports a SIGSEGV and exits with 1
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.message.find("SIGSEGV"), std::string::npos) << r.message;
#endif

  r = run_in_worker([]() -> std::string { ::_exit(3); }, 5);
  EXPECT_EQ(r.kind, Kind::crashed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("exited with status 3"), std::string::npos) << r.message;

  r = run_in_worker([]() -> std::string { throw 42; }, 5);
  EXPECT_EQ(r.kind, Kind::crashed);  // the work must answer its own failures
}

TEST(WorkerProcess, OneWorkerServesRequestsUntilOneFails) {
  WorkerProcess worker(
      [](std::string_view request) -> std::string {
        if (request == "crash") ::raise(SIGKILL);
        return std::string(request) + " from " + std::to_string(::getpid());
      },
      0);
  WorkerResult a = worker.call("a", 5);
  WorkerResult b = worker.call("b", 5);
  ASSERT_EQ(a.kind, Kind::answered) << a.message;
  ASSERT_EQ(b.kind, Kind::answered) << b.message;
  const std::string pid = a.answer.substr(a.answer.find("from"));
  EXPECT_EQ(b.answer, "b " + pid);                       // the same process
  EXPECT_NE(pid, "from " + std::to_string(::getpid()));  // not the host
  WorkerResult c = worker.call("crash", 5);
  EXPECT_EQ(c.kind, Kind::crashed);
  EXPECT_EQ(c.signal, SIGKILL);
  EXPECT_FALSE(worker.running());
  WorkerResult d = worker.call("d", 5);  // a fresh worker
  ASSERT_EQ(d.kind, Kind::answered) << d.message;
  EXPECT_NE(d.answer, "d " + pid);
}

TEST(WorkerProcess, AHangIsKilledAtTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  WorkerResult r = run_in_worker(
      []() -> std::string {
        while (true) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      },
      0.3);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.kind, Kind::timed_out);
  EXPECT_NE(r.message.find("0.3 s"), std::string::npos) << r.message;
  EXPECT_LT(took, 30.0);  // bounded: a regression fails instead of hanging
}

TEST(WorkerProcess, AllocationsOverTheMemoryLimitFail) {
  WorkerResult r = run_in_worker(
      [] {
        try {
          std::vector<char> big(std::size_t{1} << 31, 1);  // 2 GiB over a 256 MiB limit
          return std::string(big[7] == 1 ? "allocated" : "?");
        } catch (const std::bad_alloc&) {
          return std::string("bad_alloc");
        }
      },
      10, std::uint64_t{256} << 20);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator reports a failed mapping itself and ends the worker.
  EXPECT_TRUE(r.kind == Kind::crashed || r.answer == "bad_alloc");
#else
  ASSERT_EQ(r.kind, Kind::answered) << r.message;
  EXPECT_EQ(r.answer, "bad_alloc");
#endif
}

TEST(WorkerProcess, AThreadPoolMadeBeforeTheForkWorksInTheWorker) {
  cpu::ThreadPool pool(4);
  std::atomic<int> host_calls{0};
  pool.parallel_for(8, 4, [&](std::size_t) { host_calls.fetch_add(1); });
  WorkerResult r = run_in_worker(
      [&] {
        std::atomic<int> calls{0};
        std::atomic<int> distinct{0};
        pool.parallel_for(64, 4, [&](std::size_t) {
          calls.fetch_add(1);
          thread_local bool seen = false;
          if (!seen) seen = true, distinct.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        });
        return std::to_string(calls.load()) + "/" + std::to_string(distinct.load() > 1);
      },
      20);
  ASSERT_EQ(r.kind, Kind::answered) << r.message;
  EXPECT_EQ(r.answer, "64/1");  // all tasks, on more than one thread: the pool started again
  pool.parallel_for(8, 4, [&](std::size_t) { host_calls.fetch_add(1); });
  EXPECT_EQ(host_calls.load(), 16);  // the host's pool is untouched
}

TEST(WorkerProcess, AThreadPoolThatCannotStartItsThreadsIsAnError) {
  // 32 MiB of address space is not enough for 63 thread stacks.
  WorkerResult r = run_in_worker(
      [] {
        try {
          cpu::ThreadPool pool(64);
          return std::string("started");
        } catch (const UsageError& e) {
          return std::string(e.what());
        }
      },
      20, std::uint64_t{32} << 20);
  ASSERT_EQ(r.kind, Kind::answered) << r.message;
  EXPECT_NE(r.answer.find("cannot start 63 worker threads"), std::string::npos) << r.answer;
}

TEST(TrialAnswer, RoundTripsAndRefusesDamagedBytes) {
  TrialAnswer a;
  a.outcome = {Status::hopeless, "cut"};
  a.compile_seconds = 0.25;
  a.validation_call_seconds = 0.5;
  a.validation_more_seconds = 0.375;
  TimingResult t;
  t.outcome = {Status::hopeless, "cut"};
  t.mode = TimingMode::queued;
  t.clock = "steady";
  t.samples = {1e-3, 2e-3};
  t.min = 1e-3, t.median = 1.5e-3, t.depth = 4, t.dispatches = 9, t.contended = true;
  t.waited = 5, t.retaken = 2, t.clean = 3;
  t.probes = {{1, 1e-3}, {4, 4e-3}};
  a.timing = t;
  a.settle_seconds = 0.125;
  a.checked = true;
  a.validated_more = true;
  a.validation_call_clean = true;
  const std::string bytes = encode(a);
  auto back = decode_trial_answer(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->settle_seconds, 0.125);
  EXPECT_TRUE(back->checked);
  EXPECT_TRUE(back->validated_more);
  EXPECT_TRUE(back->validation_call_clean);
  EXPECT_FALSE(decode_trial_answer(encode(TrialAnswer{}))->validated_more);
  EXPECT_FALSE(decode_trial_answer(encode(TrialAnswer{}))->validation_call_clean);
  EXPECT_EQ(back->outcome.status, Status::hopeless);
  EXPECT_EQ(back->outcome.message, "cut");
  EXPECT_EQ(back->compile_seconds, 0.25);
  EXPECT_EQ(back->validation_call_seconds, 0.5);
  EXPECT_EQ(back->validation_more_seconds, 0.375);
  ASSERT_TRUE(back->timing);
  EXPECT_EQ(back->timing->samples, t.samples);
  EXPECT_EQ(back->timing->depth, 4);
  EXPECT_EQ(back->timing->probes.size(), 2u);
  EXPECT_TRUE(back->timing->contended);
  EXPECT_EQ(back->timing->waited, 5);
  EXPECT_EQ(back->timing->retaken, 2);
  EXPECT_EQ(back->timing->clean, 3);
  EXPECT_EQ(back->timing->mode, TimingMode::queued);
  // Every truncation, and a byte flipped in a length, is refused (never read past the end).
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_trial_answer(std::string_view(bytes).substr(0, n))) << n;
  std::string bad = bytes;
  bad[8] = '\x7f';  // the outcome message's length
  EXPECT_FALSE(decode_trial_answer(bad));
}

}  // namespace
}  // namespace tunekit::detail

namespace tunekit::detail {
namespace {

TEST(TrialRequest, RoundTripsTheScalarsAndSaysWhichFunctionsTheHostHad) {
  TrialRequest q;
  q.phase = TrialRequest::Phase::window;
  q.index = 123456789;
  q.check = true;
  q.check_below = 3.25e-3;
  q.validate_more = true;
  q.more_sets_over = std::numeric_limits<double>::infinity();
  q.lone_cut_over = 0.125;
  q.wait_tolerance = 0.03;
  q.timing.mode = TimingMode::queued;
  q.timing.warmup = 0;
  q.timing.repeats_floor = 5;
  q.timing.fixed_depth = 7;
  q.timing.hopeless_against = 2.5e-4;
  q.timing.wait_tolerance = 0.1;
  q.timing.clean_far_behind_ratio = 3.5;
  q.timing.retake_waited = true;
  q.timing.stop = [] { return false; };
  auto back = decode_trial_request(encode(q));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->phase, TrialRequest::Phase::window);
  EXPECT_EQ(back->index, 123456789u);
  EXPECT_TRUE(back->check);
  EXPECT_EQ(back->check_below, 3.25e-3);
  EXPECT_TRUE(back->validate_more);
  EXPECT_EQ(back->more_sets_over, std::numeric_limits<double>::infinity());
  EXPECT_EQ(back->lone_cut_over, 0.125);
  EXPECT_EQ(back->wait_tolerance, 0.03);
  EXPECT_EQ(decode_trial_request(encode(TrialRequest{}))->lone_cut_over,
            std::numeric_limits<double>::infinity());  // never, unless the host says
  EXPECT_FALSE(back->built);
  EXPECT_EQ(back->timing.mode, TimingMode::queued);
  EXPECT_EQ(back->timing.warmup, 0);
  EXPECT_EQ(back->timing.repeats_floor, 5);
  EXPECT_EQ(back->timing.fixed_depth, 7);
  EXPECT_EQ(back->timing.hopeless_against, 2.5e-4);
  EXPECT_EQ(back->timing.wait_tolerance, 0.1);
  EXPECT_EQ(back->timing.clean_far_behind_ratio, 3.5);
  EXPECT_TRUE(back->timing.retake_waited);
  EXPECT_TRUE(back->stop);
  EXPECT_FALSE(back->evict);
  EXPECT_FALSE(back->on_call);
  EXPECT_FALSE(decode_trial_request(encode(TrialAnswer{})));  // an answer is not a request
  TrialRequest endless = q;                                   // a tolerance must be a finite share
  endless.wait_tolerance = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(decode_trial_request(encode(endless)));
  for (double damaged : {-1.0, std::numeric_limits<double>::quiet_NaN()}) {
    TrialRequest d = q;
    d.check_below = damaged;
    EXPECT_FALSE(decode_trial_request(encode(d))) << damaged;
    d = q;
    d.more_sets_over = damaged;
    EXPECT_FALSE(decode_trial_request(encode(d))) << damaged;
    d = q;
    d.lone_cut_over = damaged;
    EXPECT_FALSE(decode_trial_request(encode(d))) << damaged;
    d = q;
    d.wait_tolerance = damaged;
    EXPECT_FALSE(decode_trial_request(encode(d))) << damaged;
  }
}

}  // namespace
}  // namespace tunekit::detail

namespace tunekit::detail {
namespace {

TEST(TrialRequest, CarriesTheHostsStopAnswerForASpawnedWorker) {
  TrialRequest q;
  q.stopped = true;
  auto back = decode_trial_request(encode(q));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->stopped);
  q.stopped = false;
  q.stop_after_seconds = 2.5;
  back = decode_trial_request(encode(q));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->stopped);
  EXPECT_EQ(back->stop_after_seconds, 2.5);
  q.stop_after_seconds = std::numeric_limits<double>::quiet_NaN();  // damaged: refused
  EXPECT_FALSE(decode_trial_request(encode(q)));
}

TEST(TrialSetup, RoundTripsAndRefusesDamagedBytes) {
  TrialSetup s;
  s.backend = "opencl", s.device = "1", s.arch = "sm_90", s.op = "sgemm";
  s.key = "m=256,n=256,k=256";
  s.checksum = "abc123";
  s.store = "sqlite:/tmp/x.db";
  s.input_sets = 2, s.rotation_copies = 3, s.check_calls = 4, s.default_index = 17;
  s.memory_bytes = std::uint64_t{1} << 33;
  const std::string bytes = encode(s);
  auto back = decode_trial_setup(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->backend, "opencl");
  EXPECT_EQ(back->device, "1");
  EXPECT_EQ(back->arch, "sm_90");
  EXPECT_EQ(back->op, "sgemm");
  EXPECT_EQ(back->key, s.key);
  EXPECT_EQ(back->checksum, "abc123");
  EXPECT_EQ(back->store, "sqlite:/tmp/x.db");
  EXPECT_EQ(back->input_sets, 2u);
  EXPECT_EQ(back->rotation_copies, 3u);
  EXPECT_EQ(back->check_calls, 4);
  EXPECT_EQ(back->default_index, 17u);
  EXPECT_EQ(back->memory_bytes, std::uint64_t{1} << 33);
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_trial_setup(std::string_view(bytes).substr(0, n))) << n;
  EXPECT_FALSE(decode_trial_setup(encode(TrialRequest{})));  // a request is not a setup
}

// A spawned worker that cannot be executed, or exits while setting up, is setup_failed naming
// the program (the runner turns it into a UsageError: no candidate is blamed).
TEST(WorkerProcess, ASpawnedProgramThatCannotSetUpSaysWhy) {
  WorkerProcess missing(WorkerProcess::Spawn{"/nonexistent/worker", "setup", 5});
  WorkerResult r = missing.call("request", 5);
  EXPECT_EQ(r.kind, WorkerResult::Kind::setup_failed);
  EXPECT_NE(r.message.find("/nonexistent/worker could not be started"), std::string::npos)
      << r.message;
  EXPECT_FALSE(missing.running());

  WorkerProcess exits(WorkerProcess::Spawn{"/bin/false", "setup", 5});
  r = exits.call("request", 5);
  EXPECT_EQ(r.kind, WorkerResult::Kind::setup_failed);
  EXPECT_NE(r.message.find("/bin/false exited with status 1 while setting up"), std::string::npos)
      << r.message;
}

}  // namespace
}  // namespace tunekit::detail
