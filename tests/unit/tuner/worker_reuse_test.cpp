// A forked worker is replaced after a build only when the build can have changed the host
// (src/tuner/search_context.cpp SearchContext::built): an op with a build step gets a fresh
// worker per compile pass, one without keeps one worker for the whole search — a fresh fork
// per batch costs its copy-on-write faults on every input it restores.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <string>

#include "fakes/hostile_op.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using testing::IsolationArgs;

// The processes candidates ran in, written by whichever process runs them (a page shared
// across fork()).
struct Pids {
  std::atomic<int> count;
  pid_t pid[4000];
};

class SharedPids {
 public:
  SharedPids() {
    void* page =
        ::mmap(nullptr, sizeof(Pids), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) throw std::runtime_error("mmap failed");
    pids_ = new (page) Pids{};
  }
  ~SharedPids() { ::munmap(pids_, sizeof(Pids)); }
  SharedPids(const SharedPids&) = delete;
  SharedPids& operator=(const SharedPids&) = delete;
  void record() {
    const int n = pids_->count.fetch_add(1);
    if (n < 4000) pids_->pid[n] = ::getpid();
  }
  std::set<pid_t> workers() const {
    std::set<pid_t> out;
    for (int i = 0; i < std::min(pids_->count.load(), 4000); ++i)
      if (pids_->pid[i] != ::getpid()) out.insert(pids_->pid[i]);
    return out;
  }

 private:
  Pids* pids_;
};

// Eight correct candidates that record where they run; with `build_step`, an Op::build that
// does nothing but exists.
std::unique_ptr<Op<IsolationArgs>> recording_op(SharedPids& pids, bool build_step) {
  auto op = std::make_unique<Op<IsolationArgs>>("recording", 1);
  op->key_field({"n", Value::Type::integer, "length", std::nullopt, 1, 1 << 20});
  for (int c = 0; c < 8; ++c) {
    op->candidate("c" + std::to_string(c), [&pids](IsolationArgs& x) {
      pids.record();
      testing::add(x);
    });
  }
  op->default_candidate("c0")
      .inputs([](const Key& key, int input_set) { return testing::make_args(key, input_set); })
      .outputs([](IsolationArgs& x) {
        return std::vector<OutputView>{OutputView::of(std::span(x.out))};
      })
      .key([](const IsolationArgs& x) {
        return Key{{"n", static_cast<std::int64_t>(x.out.size())}};
      });
  if (build_step) op->build([](const Config&) { return Outcome::success(); });
  return op;
}

std::set<pid_t> workers_of_a_search(bool build_step) {
  SharedPids pids;
  auto op = recording_op(pids, build_step);
  cpu::CpuDevice device;
  TunerOptions o;
  o.persist.store = "none";
  o.measure.isolation.mode = IsolationOptions::Mode::worker;
  o.decide.strategy = "surrogate:init=1";  // one point per batch: a compile pass each
  o.decide.confirm_pairs = 0;
  TuneReport r;
  Tuner(device, o).select(*op, Key{{"n", 256}}, &r);
  EXPECT_EQ(r.isolation, "worker");
  EXPECT_EQ(r.candidates.size(), 8u);
  return pids.workers();
}

TEST(WorkerReuse, OneWorkerServesASearchWhoseBuildsChangeNothing) {
  EXPECT_EQ(workers_of_a_search(false).size(), 1u);
}

TEST(WorkerReuse, AnOpWithABuildStepGetsAFreshWorkerAfterEachCompilePass) {
  EXPECT_GE(workers_of_a_search(true).size(), 8u);  // the default's batch, then one per point
}

}  // namespace
}  // namespace tunekit
