// The controller's failure paths (review findings): a store that fails never strands a key
// or replaces the caller's error, a stored pick is screened like a tuned one, a runner's
// result without a workspace and a malformed policy are misuse, out of memory bans nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/temp_dir.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/store.hpp"
#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

using test::make_problem;
using test::make_runner;
using test::make_set;
using test::options_with;

// A store forwarding to a real one, whose writes can be made to throw.
class FlakyStore final : public Store {
 public:
  explicit FlakyStore(std::unique_ptr<Store> inner) : inner_(std::move(inner)) {}
  bool fail_writes = false;

  std::string describe() const override { return inner_->describe(); }
  std::optional<StoredChoice> find(std::string_view d) override { return inner_->find(d); }
  void put(const StoredChoice& c) override {
    if (fail_writes) throw std::runtime_error("disk full");
    inner_->put(c);
  }
  std::vector<StoredChoice> list(std::string_view op) override { return inner_->list(op); }
  std::size_t remove(std::string_view what) override { return inner_->remove(what); }
  void mark_stale(std::string_view d, std::string_view why) override {
    if (fail_writes) throw std::runtime_error("disk full");
    inner_->mark_stale(d, why);
  }
  void ban(const BannedCandidate& b) override {
    if (fail_writes) throw std::runtime_error("disk full");
    inner_->ban(b);
  }
  std::vector<BannedCandidate> bans(std::string_view d) override { return inner_->bans(d); }
  void record_miss(const PendingMiss& m) override { inner_->record_miss(m); }
  std::vector<PendingMiss> pending(std::string_view op) override { return inner_->pending(op); }
  std::size_t remove_pending(std::string_view d) override { return inner_->remove_pending(d); }
  // The stack controller takes no leases: this store offers no exclusion.
  LeaseTaking take_lease(const TuningLease&, std::chrono::milliseconds) override {
    return {LeaseState::unavailable, {}, "FlakyStore takes no leases"};
  }
  bool renew_lease(std::string_view, std::string_view, std::chrono::milliseconds) override {
    return false;
  }
  void release_lease(std::string_view, std::string_view) override {}
  std::vector<TuningLease> leases() override { return {}; }
  std::int64_t now_ms() override { return inner_->now_ms(); }

 private:
  std::unique_ptr<Store> inner_;
};

struct StackFailures : ::testing::Test {
  tunekit::testing::TempDir dir;
  std::vector<std::string> warnings;
  std::shared_ptr<FlakyStore> store = std::make_shared<FlakyStore>(
      open_store("sqlite:" + (dir / "choices.db").string(), [](std::string_view) {}));
  Problem problem = make_problem();
  CandidateSet set = make_set({"fast"});

  StackOptions stored(std::shared_ptr<TrialRunner> runner) {
    StackOptions o = options_with(std::move(runner));
    o.store = store;
    o.identity.device.known = true;
    o.identity.device.backend = "cpu";
    o.identity.device.product = "Test CPU";
    o.identity.toolchain = this_toolchain();
    o.log = Log::warnings_to([this](std::string_view w) { warnings.emplace_back(w); });
    return o;
  }
};

TEST_F(StackFailures, AStoreWriteThatFailsIsWarnedAndTheDecisionStillServes) {
  store->fail_writes = true;
  StackController c(stored(make_runner()));
  EXPECT_EQ(c.select(problem, set).candidate, "fast");
  const Selection again = c.select(problem, set);  // not stranded as "being tuned"
  EXPECT_EQ(again.source, DecisionSource::hit);
  EXPECT_EQ(again.candidate, "fast");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("disk full"), std::string::npos) << warnings[0];
}

TEST_F(StackFailures, AStoreThatFailsToKeepABanLeavesTheCallersErrorUnchanged) {
  CandidateSet throwing = make_set({});
  throwing.candidates.push_back(fakes::doubling("fast", [](fakes::FloatWorkspace& w) {
    if (w.in[0] == 7) throw std::runtime_error("boom");  // only on the caller's request
  }));
  StackController c(stored(make_runner()));
  ASSERT_EQ(c.select(problem, throwing).candidate, "fast");
  store->fail_writes = true;
  fakes::FloatWorkspace request(64, 7);
  try {
    c.try_execute(problem, throwing, request);
    FAIL() << "the candidate's error did not propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
  }
  EXPECT_EQ(c.banned(problem, throwing), (std::vector<std::string>{"fast"}));
  EXPECT_FALSE(warnings.empty());
}

TEST_F(StackFailures, AStoredPickThisProcessWouldNotRunIsAMissNotStale) {
  set.candidates[1].scratch_bytes = 64;
  {
    StackController first(stored(make_runner()));
    ASSERT_EQ(first.select(problem, set).candidate, "fast");
  }
  auto runner = make_runner();
  StackOptions o = stored(runner);
  o.scratch_limit = 16;
  StackController second(o);
  const Selection s = second.select(problem, set);
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(runner->trials("fast"), 0);  // never run
  const std::vector<StoredChoice> all = store->list({});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].stale.empty());  // still right for the process that stored it
}

// A runner whose successful results carry no workspace.
class NoWorkspaceRunner final : public TrialRunner {
 public:
  TrialResult run(const Problem&, const StackCandidate&) override {
    TrialResult r;
    r.seconds = 1;
    return r;
  }
};

TEST(StackMisuse, ARunnersResultWithoutItsWorkspaceIsAUsageError) {
  StackController c(options_with(std::make_shared<NoWorkspaceRunner>()));
  EXPECT_THROW(c.select(make_problem(), make_set({"fast"})), UsageError);
}

TEST(StackMisuse, AMalformedPolicyIsAUsageError) {
  for (double bad : {std::nan(""), -0.1, 1.0}) {
    StackOptions o;
    o.policy.tie_band = bad;
    EXPECT_THROW(StackController{o}, UsageError) << bad;
  }
  for (double bad : {std::nan(""), 0.0, -1.0, std::numeric_limits<double>::infinity()}) {
    StackOptions o;
    o.policy.max_relative_mad = bad;
    EXPECT_THROW(StackController{o}, UsageError) << bad;
  }
}

TEST(StackOutOfMemory, ACandidateOutOfMemoryOnTheRequestIsNotBanned) {
  CandidateSet set = make_set({});
  set.candidates.push_back(fakes::doubling("fast", [](fakes::FloatWorkspace& w) {
    if (w.in[0] == 7) throw std::bad_alloc();
  }));
  StackController c(options_with(make_runner()));
  const Problem p = make_problem();
  ASSERT_EQ(c.select(p, set).candidate, "fast");
  fakes::FloatWorkspace request(64, 7);
  EXPECT_THROW(c.try_execute(p, set, request), std::bad_alloc);
  EXPECT_TRUE(c.banned(p, set).empty());
  EXPECT_EQ(c.select(p, set).candidate, "fast");
}

}  // namespace
}  // namespace tunekit::stack
