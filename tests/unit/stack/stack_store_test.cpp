// Tests for src/stack/stack_persistence.cpp: stack decisions live in the same store as kernel
// choices, their identity carrying the scope; `cache ls` lists them; a stored decision is
// validated again before it serves; bans are stored.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "fakes/temp_dir.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/store.hpp"
#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

using test::make_problem;
using test::make_runner;
using test::make_set;
using test::options_with;

struct StackStore : ::testing::Test {
  tunekit::testing::TempDir dir;
  std::vector<std::string> warnings;
  std::shared_ptr<Store> store =
      open_store("sqlite:" + (dir / "choices.db").string(),
                 [this](std::string_view w) { warnings.emplace_back(w); });
  Problem problem = make_problem();
  CandidateSet set = make_set({"fast"});

  StackOptions stored_options(std::shared_ptr<TrialRunner> runner,
                              Mode mode = Mode::explore) const {
    StackOptions o = options_with(std::move(runner), mode);
    o.store = store;
    o.identity.device.known = true;
    o.identity.device.backend = "cpu";
    o.identity.device.product = "Test CPU";
    o.identity.toolchain = this_toolchain();
    return o;
  }
  std::string digest() const {
    return stack_identity(stored_options(nullptr).identity, problem, set).digest().hex();
  }
};

TEST_F(StackStore, AMeasuredDecisionIsStoredWithItsScopeAndServedToTheNextProcess) {
  ASSERT_TRUE(store) << (warnings.empty() ? "" : warnings.front());
  {
    StackController first(stored_options(make_runner()));
    ASSERT_EQ(first.select(problem, set).candidate, "fast");
  }
  std::vector<StoredChoice> all = store->list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].scope, "graph");
  EXPECT_EQ(all[0].op, "block");
  EXPECT_EQ(all[0].key, problem.signature.text());
  EXPECT_EQ(all[0].winner, "fast");
  EXPECT_EQ(all[0].identity_digest, digest());
  ASSERT_EQ(all[0].evidence.size(), 2u);
  EXPECT_TRUE(all[0].evidence[0].is_default);
  EXPECT_TRUE(all[0].evidence[1].winner);
  EXPECT_DOUBLE_EQ(all[0].evidence[1].score, 0.5);  // the paired ratio

  // A new controller (the next process) serves it after one validation, no pairs timed.
  auto runner = make_runner();
  StackController second(stored_options(runner, Mode::cache_only));
  Selection s = second.select(problem, set);
  EXPECT_EQ(s.candidate, "fast");
  EXPECT_EQ(s.source, DecisionSource::stored);
  EXPECT_EQ(runner->trials("fast"), 1);
  EXPECT_EQ(runner->trials("reference"), 1);
  EXPECT_EQ(second.select(problem, set).source, DecisionSource::hit);
}

TEST_F(StackStore, CacheLsListsStackDecisionsBesideKernelChoices) {
  ASSERT_TRUE(store);
  StackController c(stored_options(make_runner()));
  (void)c.select(problem, set);
  StoredChoiceList list{store->describe(), "", "", store->list()};
  std::ostringstream console;
  make_reporter("console")->write(list, console);
  EXPECT_NE(console.str().find("scope"), std::string::npos) << console.str();
  EXPECT_NE(console.str().find("graph"), std::string::npos) << console.str();
  EXPECT_NE(console.str().find("block"), std::string::npos) << console.str();
  std::ostringstream json;
  make_reporter("json")->write(list, json);
  EXPECT_NE(json.str().find("\"scope\": \"graph\""), std::string::npos) << json.str();
}

TEST_F(StackStore, AStoredDecisionThatNoLongerValidatesIsStaleNotServed) {
  ASSERT_TRUE(store);
  {
    StackController first(stored_options(make_runner()));
    ASSERT_EQ(first.select(problem, set).candidate, "fast");
  }
  // Same name and version, now wrong (a kernel bug the identity cannot see).
  set.candidates[1] = fakes::doubling("fast", [](fakes::FloatWorkspace& w) { w.out[0] = -1; });
  StackController later(stored_options(make_runner()));
  Selection s = later.select(problem, set);
  EXPECT_TRUE(s.reference);
  std::optional<StoredChoice> entry = store->find(digest());
  ASSERT_TRUE(entry);
  EXPECT_NE(entry->stale.find("failed re-validation"), std::string::npos) << entry->stale;
}

TEST_F(StackStore, ALiveBanIsStoredAndHonouredByTheNextProcess) {
  ASSERT_TRUE(store);
  StackCandidate& fast = set.candidates[1];
  auto run = fast.run;
  fast.run = [run](Workspace& w, std::span<std::byte> s) {
    run(w, s);
    if (!StackController::is_tuning()) throw std::runtime_error("live failure");
  };
  fakes::FloatWorkspace request(64);
  {
    StackController first(stored_options(make_runner()));
    EXPECT_THROW(first.try_execute(problem, set, request), std::runtime_error);
  }
  std::vector<BannedCandidate> bans = store->bans(digest());
  ASSERT_EQ(bans.size(), 1u);
  EXPECT_EQ(bans[0].candidate, "fast");
  EXPECT_FALSE(store->find(digest())->stale.empty());
  auto runner = make_runner();
  StackController later(stored_options(runner));
  Selection s = later.select(problem, set);
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(runner->trials("fast"), 0);
  EXPECT_EQ(later.banned(problem, set), std::vector<std::string>{"fast"});
}

TEST_F(StackStore, WithoutAKnownDeviceNothingIsStored) {
  ASSERT_TRUE(store);
  StackOptions o = stored_options(make_runner());
  o.identity.device.known = false;
  StackController c(o);
  EXPECT_EQ(c.select(problem, set).candidate, "fast");
  EXPECT_TRUE(store->list().empty());
}

TEST_F(StackStore, CacheOnlyAfterALiveBanServesTheReferenceAndSaysBanned) {
  ASSERT_TRUE(store);
  {
    StackController first(stored_options(make_runner()));
    ASSERT_EQ(first.select(problem, set).candidate, "fast");
  }
  StackCandidate& fast = set.candidates[1];
  auto run = fast.run;
  fast.run = [run](Workspace& w, std::span<std::byte> s) {
    run(w, s);
    if (!StackController::is_tuning()) throw std::runtime_error("live failure");
  };
  StackController cached(stored_options(make_runner(), Mode::cache_only));
  fakes::FloatWorkspace request(64);
  EXPECT_THROW(cached.try_execute(problem, set, request), std::runtime_error);
  Selection s = cached.select(problem, set);
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(s.source, DecisionSource::banned);
  EXPECT_EQ(cached.stats().tunes, 0u);
}

TEST(StackIdentity, TheScopeIsInTheDigestOnlyWhenNotKernel) {
  Identity kernel;
  kernel.op = "sgemm";
  EXPECT_EQ(kernel.encode().find("scope"), std::string::npos);  // old digests unchanged
  Identity graph = kernel;
  graph.scope = "graph";
  EXPECT_NE(graph.digest(), kernel.digest());
  const Problem p = make_problem();
  Problem other_deps = p;
  other_deps.depends_on = {Dependency{Scope::operator_, Digest::of("op"), Digest::of("set"), "x"}};
  EXPECT_NE(stack_identity({}, p, make_set()).digest(),
            stack_identity({}, other_deps, make_set()).digest());
  EXPECT_EQ(stack_identity({}, p, make_set()).scope, "graph");
}

}  // namespace
}  // namespace tunekit::stack
