// Serving you can trust (DESIGN §7): replayed choices are re-validated once per tuner, a
// chosen candidate that fails live is banned and its error propagates, force mode's artifacts
// fail clearly, and the small rules of seed 001/002.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "fakes/fake_device.hpp"
#include "tunekit/artifact.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

class Serving : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tunekit-serving-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
    dev_.behaviour["faster"].seconds = 0.5e-3;
  }
  void TearDown() override { fs::remove_all(dir_); }

  TunerOptions options(Mode mode = Mode::tune) const {
    TunerOptions o = quiet(mode);
    o.hooks.log =
        Log::warnings_to([](std::string_view m) { ADD_FAILURE() << "unexpected warning: " << m; });
    return o;
  }
  // Warnings expected (a skipped artifact): not checked.
  TunerOptions quiet(Mode mode = Mode::tune) const {
    TunerOptions o;
    o.decide.mode = mode;
    o.persist.store = "sqlite:" + (dir_ / "choices.db").string();
    return o;
  }
  std::optional<StoredChoice> stored(Tuner& tuner, const OpBase& op, const Key& key) {
    return tuner.store()->find(tuner.identity(op, key).digest().hex());
  }

  // A pow2-bucketed op over n with candidates "def" (the default) and "fast", both correct;
  // `spoil(name, args)` runs after each call (it may throw or write a wrong value). `made`
  // collects the size of every workload made.
  std::unique_ptr<Op<fakes::FakeArgs>> bucketed_op(
      std::function<void(const std::string&, fakes::FakeArgs&)> spoil,
      std::vector<std::int64_t>* made = nullptr) {
    auto op = std::make_unique<Op<fakes::FakeArgs>>("bucketed", 1);
    op->key([](const fakes::FakeArgs& a) {
        return Key{{"n", static_cast<long>(a.out.size())}};
      })
        .inputs([made](const Key& k) {
          if (made) made->push_back(k.integer("n"));
          return fakes::FakeArgs{std::vector<float>(static_cast<std::size_t>(k.integer("n")))};
        })
        .outputs([](fakes::FakeArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
        .reference([](fakes::FakeArgs& a) {
          for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
        })
        .bucket("n", Bucketing::pow2());
    for (const std::string name : {"def", "fast"}) {
      op->candidate(name, [this, name, spoil](fakes::FakeArgs& a) {
        dev_.running = name;
        for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
        spoil(name, a);
      });
    }
    op->default_candidate("def");
    dev_.set_candidate_names({"def", "fast"});
    return op;
  }

  fs::path dir_;
  fakes::FakeDevice dev_;
};

TEST_F(Serving, AStoredWinnerThatNoLongerValidatesIsStaleAndNotServed) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  const Key key{{"n", 4}};
  { Tuner(dev_, options()).select(*op, key); }
  dev_.behaviour["fast"].wrong = true;  // a driver update: same identity, wrong answers

  Tuner cached(dev_, options(Mode::cached));
  TuneReport r;
  const Choice c = cached.select(*op, key, &r);
  EXPECT_EQ(c.source, Source::stale_replay);
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_NE(r.stale.find("fast failed re-validation: validation_failed"), std::string::npos)
      << r.stale;
  auto entry = stored(cached, *op, key);
  ASSERT_TRUE(entry.has_value());  // kept as evidence
  EXPECT_EQ(entry->winner, "fast");
  EXPECT_NE(entry->stale.find("failed re-validation"), std::string::npos) << entry->stale;

  // Mode tune searches again (the wrong candidate loses) and the new entry serves.
  Tuner tune(dev_, options());
  const Choice again = tune.select(*op, key, &r);
  EXPECT_EQ(again.source, Source::searched);
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_NE(r.stale.find("is stale"), std::string::npos) << r.stale;
  EXPECT_NE(r.reason.find("is stale"), std::string::npos) << r.reason;
  entry = stored(tune, *op, key);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->winner, "def");
  EXPECT_TRUE(entry->stale.empty());
}

TEST_F(Serving, AStoredChoiceIsValidatedOncePerTunerNotOnEveryCall) {
  std::atomic<int> inputs{0};
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def", &inputs);
  const Key key{{"n", 4}};
  { Tuner(dev_, options()).select(*op, key); }
  const int after_search = inputs.load();
  Tuner second(dev_, options(Mode::cached));
  EXPECT_EQ(second.select(*op, key).source, Source::cache_replay);
  EXPECT_EQ(inputs.load(), after_search + 1);  // one workload made for one validation run
  EXPECT_EQ(second.select(*op, key).source, Source::memory_hit);
  EXPECT_EQ(inputs.load(), after_search + 1);
}

TEST_F(Serving, AnOpThatOptsOutOfRevalidationIsServedWithoutARun) {
  std::atomic<int> inputs{0};
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def", &inputs);
  op->revalidate(false);
  const Key key{{"n", 4}};
  { Tuner(dev_, options()).select(*op, key); }
  const int after_search = inputs.load();
  dev_.behaviour["fast"].wrong = true;
  Tuner second(dev_, options(Mode::cached));
  EXPECT_EQ(second.select(*op, key).source, Source::cache_replay);  // trusted, as declared
  EXPECT_EQ(inputs.load(), after_search);
}

TEST_F(Serving, AChosenCandidateThatThrowsLiveIsBannedAndTheErrorPropagates) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast", "faster"}, "def");
  fakes::FakeArgs args{std::vector<float>(4)};
  const Key key = op->key_of(args);
  Tuner tuner(dev_, options());
  ASSERT_EQ(tuner.select(*op, key).index, *op->find("faster"));
  dev_.behaviour["faster"].throw_at_launch = true;
  EXPECT_THROW(tuner.run(*op, args), std::runtime_error);  // unchanged, never re-run
  EXPECT_FALSE(tuner.settled(*op, key).has_value());       // retracted

  auto entry = stored(tuner, *op, key);
  ASSERT_TRUE(entry.has_value());
  EXPECT_NE(entry->stale.find("faster failed live"), std::string::npos) << entry->stale;
  const auto bans = tuner.store()->bans(tuner.identity(*op, key).digest().hex());
  ASSERT_EQ(bans.size(), 1u);
  EXPECT_EQ(bans[0].candidate, "faster");
  EXPECT_NE(bans[0].reason.find("fake: launch failed"), std::string::npos) << bans[0].reason;

  // The next call searches again without it, and the store serves the new choice.
  dev_.behaviour["faster"].throw_at_launch = false;
  TuneReport r;
  EXPECT_EQ(tuner.select(*op, key, &r).source, Source::searched);
  EXPECT_EQ(r.winner_name, "fast");
  const CandidateReport* banned = r.find(*op->find("faster"));
  ASSERT_NE(banned, nullptr);
  EXPECT_EQ(banned->outcome.status, Status::rejected);
  EXPECT_NE(banned->outcome.message.find("banned for this key"), std::string::npos);
  Tuner later(dev_, options(Mode::cached));
  EXPECT_EQ(later.select(*op, key, &r).source, Source::cache_replay);
  EXPECT_EQ(r.winner_name, "fast");
  // A later process's search keeps the store's ban.
  Tuner force(dev_, options());
  r = force.tune(*op, key);
  EXPECT_EQ(r.find(*op->find("faster"))->outcome.status, Status::rejected);
}

TEST_F(Serving, TheDefaultsOwnLiveFailurePropagatesAndBansNothing) {
  dev_.behaviour["def"].seconds = 0.5e-3;  // the default wins the search
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  fakes::FakeArgs args{std::vector<float>(4)};
  Tuner tuner(dev_, options());
  ASSERT_EQ(tuner.select(*op, op->key_of(args)).index, *op->find("def"));
  dev_.behaviour["def"].throw_at_launch = true;
  EXPECT_THROW(tuner.run(*op, args), std::runtime_error);
  EXPECT_TRUE(tuner.store()->bans().empty());
  EXPECT_TRUE(tuner.settled(*op, op->key_of(args)).has_value());  // still the choice
}

TEST_F(Serving, AChosenCandidateWhoseBuildFailsRunsTheDefaultAndSaysWhy) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  fakes::FakeArgs args{std::vector<float>(4)};
  const Key key = op->key_of(args);
  std::vector<std::string> heard;
  TunerOptions o = options();
  o.hooks.on_fallback = [&](std::string_view name, const Outcome& cause) {
    heard.push_back(std::string(name) + ": " + cause.message);
  };
  Tuner tuner(dev_, o);
  ASSERT_EQ(tuner.select(*op, key).index, *op->find("fast"));
  dev_.behaviour["fast"].hook = [] {
    throw TrialError(Status::compile_failed, "fake: the program does not build");
  };
  args.out.assign(4, -1);
  tuner.run(*op, args);  // the default ran instead
  EXPECT_EQ(dev_.running, "def");
  EXPECT_EQ(args.out[3], 3);
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_NE(heard[0].find("fast: "), std::string::npos) << heard[0];
  EXPECT_NE(heard[0].find("fake: the program does not build"), std::string::npos) << heard[0];
  EXPECT_EQ(tuner.store()->bans().size(), 1u);
}

TEST_F(Serving, ForceModeWithAnArtifactDirectoryThatCannotBeWrittenStoresAndPublishesNothing) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  const Key key{{"n", 4}};
  const fs::path not_a_directory = dir_ / "artifacts";
  { std::ofstream(not_a_directory) << "a file where the directory should be"; }
  TunerOptions o = options(Mode::force);
  o.persist.artifact_dir = not_a_directory.string();
  Tuner tuner(dev_, o);
  try {
    tuner.select(*op, key);
    FAIL() << "a failed artifact write was silent";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing was stored or published"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(tuner.settled(*op, key).has_value());
  EXPECT_FALSE(stored(tuner, *op, key).has_value());
}

TEST_F(Serving, ForceModeForAnUnknownDeviceFailsClearly) {
  fakes::FakeDevice unknown;
  unknown.behaviour = dev_.behaviour;
  auto op2 = fakes::make_fake_op(unknown, {"def", "fast"}, "def");
  const_cast<DeviceIdentity&>(unknown.identity()).known = false;
  TunerOptions o = options(Mode::force);
  o.persist.artifact_dir = (dir_ / "artifacts").string();
  Tuner tuner(unknown, o);
  EXPECT_THROW(tuner.select(*op2, Key{{"n", 4}}), UsageError);
  EXPECT_FALSE(tuner.settled(*op2, Key{{"n", 4}}).has_value());
  EXPECT_FALSE(fs::exists(dir_ / "artifacts") && !fs::is_empty(dir_ / "artifacts"));
}

TEST_F(Serving, SettledNeverSearchesWaitsOrReadsTheStore) {
  std::atomic<int> inputs{0};
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def", &inputs);
  const Key key{{"n", 4}};
  { Tuner(dev_, options()).select(*op, key); }  // the store knows it now
  const int before = inputs.load();
  Tuner tuner(dev_, options());
  EXPECT_FALSE(tuner.settled(*op, key).has_value());  // stored, but not served yet
  EXPECT_EQ(inputs.load(), before);                   // nothing ran
  tuner.select(*op, key);
  ASSERT_TRUE(tuner.settled(*op, key).has_value());
  EXPECT_EQ(tuner.settled(*op, key)->index, *op->find("fast"));
}

TEST_F(Serving, AOneCandidateSetIsAnsweredWithoutTuningAndStoresNothing) {
  std::atomic<int> inputs{0};
  auto op = fakes::make_fake_op(dev_, {"def"}, "def", &inputs);
  Tuner tuner(dev_, options());
  TuneReport r;
  const Choice c = tuner.select(*op, Key{{"n", 4}}, &r);
  EXPECT_EQ(c.source, Source::use_default);
  EXPECT_NE(r.reason.find("one candidate"), std::string::npos) << r.reason;
  EXPECT_EQ(inputs.load(), 0);
  EXPECT_TRUE(tuner.store()->list().empty());
}

TEST_F(Serving, WhenEveryCandidateFailsTheReportCarriesTheLastFailure) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  dev_.behaviour["def"].wrong = true;
  dev_.behaviour["fast"].throw_at_launch = true;
  Tuner tuner(dev_, options());
  TuneReport r;
  tuner.select(*op, Key{{"n", 4}}, &r);
  EXPECT_NE(
      r.reason.find("the last failure: fast launch_failed: validation run: fake: launch failed"),
      std::string::npos)
      << r.reason;
}

// Each tuner records a key's miss once (a hot loop in mode cached must not write the store on
// every call): the count says how many tuners (processes) missed it.
TEST_F(Serving, CachedModeRecordsEachMissOnceForLaterTuning) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner tuner(dev_, options(Mode::cached));
  for (int n : {4, 8, 16, 8, 4}) tuner.select(*op, Key{{"n", n}});
  const auto pending = tuner.store()->pending();
  ASSERT_EQ(pending.size(), 3u);
  for (const PendingMiss& p : pending) {
    EXPECT_EQ(p.op, "fake");
    EXPECT_EQ(p.count, 1);
  }
  EXPECT_TRUE(tuner.store()->list().empty());  // nothing measured
  Tuner second(dev_, options(Mode::cached));
  second.select(*op, Key{{"n", 4}});
  for (const PendingMiss& p : second.store()->pending())
    EXPECT_EQ(p.count, p.key == "n=4" ? 2 : 1) << p.key;
}

TEST_F(Serving, TuneModeRecordsTheKeysItsSearchLeavesUnstoredWhenAsked) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  TunerOptions o = options();
  o.persist.record_misses = true;
  Tuner tuner(dev_, o);
  tuner.select(*op, Key{{"n", 4}});  // measured and stored: nothing pending
  dev_.behaviour["def"].wrong = true;
  dev_.behaviour["fast"].wrong = true;
  tuner.select(*op, Key{{"n", 8}});  // nothing validated: pending
  const auto pending = tuner.store()->pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].key, "n=8");
  TunerOptions plain = options();
  Tuner quiet(dev_, plain);
  quiet.select(*op, Key{{"n", 16}});
  EXPECT_EQ(quiet.store()->pending().size(), 1u);  // not asked: not recorded
}

TEST_F(Serving, BucketedSizesShareOneEntryMeasuredOnceAtTheRepresentative) {
  std::vector<std::int64_t> made;  // the size of every workload made
  // Wrong at one size of its bucket only: the bucket's choice must not serve it there.
  auto op = bucketed_op(
      [](const std::string& name, fakes::FakeArgs& a) {
        if (name == "fast" && a.out.size() == 120) a.out[0] = -1;
      },
      &made);
  Tuner tuner(dev_, options());
  TuneReport r;
  EXPECT_EQ(tuner.select(*op, Key{{"n", 100}}, &r).source, Source::searched);
  EXPECT_EQ(r.key, "n=128");
  EXPECT_EQ(r.bucket, "n: 65..128 (pow2)");
  EXPECT_EQ(r.winner_name, "fast");
  const std::size_t searched_made = made.size();
  EXPECT_EQ(std::count(made.begin(), made.end(), 128), static_cast<long>(searched_made - 1));
  EXPECT_EQ(made.back(), 100);  // validated at the real size

  EXPECT_EQ(tuner.select(*op, Key{{"n", 128}}, &r).index, *op->find("fast"));
  const Choice at120 = tuner.select(*op, Key{{"n", 120}}, &r);
  EXPECT_EQ(at120.index, *op->find("def"));  // fails at 120: the default serves that size
  EXPECT_NE(r.reason.find("failed validation at n=120"), std::string::npos) << r.reason;
  EXPECT_EQ(tuner.select(*op, Key{{"n", 100}}).source, Source::memory_hit);
  EXPECT_EQ(tuner.store()->list().size(), 1u);  // one entry for the bucket
  EXPECT_EQ(tuner.store()->list()[0].key, "n=128");

  EXPECT_EQ(tuner.select(*op, Key{{"n", 129}}, &r).source, Source::searched);  // a new bucket
  EXPECT_EQ(r.key, "n=256");
  EXPECT_EQ(tuner.store()->list().size(), 2u);
  // A later process serves the bucket from the store.
  Tuner later(dev_, options(Mode::cached));
  EXPECT_EQ(later.select(*op, Key{{"n", 90}}, &r).source, Source::cache_replay);
  EXPECT_EQ(r.winner_name, "fast");
}

TEST_F(Serving, ModeCachedServesABudgetCutEntryThatAnUnrestrictedSearchWouldReplace) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast", "faster"}, "def");
  const Key key{{"n", 4}};
  TunerOptions cut = options();
  cut.decide.budget_evaluations = 1;  // the default and one more point: a partial search
  {
    Tuner tuner(dev_, cut);
    tuner.select(*op, key);
    ASSERT_TRUE(stored(tuner, *op, key)->budget_cut);
  }
  TuneReport r;
  EXPECT_EQ(Tuner(dev_, options(Mode::cached)).select(*op, key, &r).source, Source::cache_replay);
  EXPECT_EQ(Tuner(dev_, options()).select(*op, key, &r).source, Source::searched);
}

TEST_F(Serving, ChangingWhatCorrectMeansIsAStoreMiss) {
  const Key key{{"n", 4}};
  {
    auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
    Tuner(dev_, options()).select(*op, key);
  }
  auto same = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  EXPECT_EQ(Tuner(dev_, options(Mode::cached)).select(*same, key).source, Source::cache_replay);
  auto tighter = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  tighter->tolerance(Tolerance{1e-9, 1e-9});
  EXPECT_EQ(Tuner(dev_, options(Mode::cached)).select(*tighter, key).source,
            Source::search_disabled);
  auto new_reference = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  new_reference->reference_version(2);
  EXPECT_EQ(Tuner(dev_, options(Mode::cached)).select(*new_reference, key).source,
            Source::search_disabled);
}

// Found by review: bans, buckets, races and call-backs.
std::atomic<bool> fast_throws{false};

TEST_F(Serving, ABucketsStoredEntryNamesTheBucketItServes) {
  auto op = bucketed_op([](const std::string&, fakes::FakeArgs&) {});
  Tuner tuner(dev_, options());
  tuner.select(*op, Key{{"n", 100}});
  tuner.select(*op, Key{{"n", 256}});  // asked at the representative itself
  const std::vector<StoredChoice> entries = tuner.store()->list();
  ASSERT_EQ(entries.size(), 2u);
  for (const StoredChoice& e : entries) {
    ASSERT_TRUE(e.search);
    EXPECT_EQ(e.search->bucket, e.key == "n=128" ? "n: 65..128 (pow2)" : "n: 129..256 (pow2)")
        << e.key;
  }
}

TEST_F(Serving, ALiveFailureAtARealSizeBansTheCandidateForItsBucket) {
  auto op = bucketed_op([](const std::string& name, fakes::FakeArgs&) {
    if (name == "fast" && fast_throws) throw std::runtime_error("live boom");
  });
  Tuner tuner(dev_, quiet());
  ASSERT_EQ(tuner.select(*op, Key{{"n", 100}}).index, *op->find("fast"));
  fakes::FakeArgs args{std::vector<float>(100)};
  fast_throws = true;
  EXPECT_THROW(tuner.run(*op, args), std::runtime_error);
  fast_throws = false;
  TuneReport r;
  const Choice c = tuner.select(*op, Key{{"n", 100}}, &r);
  EXPECT_NE(c.index, *op->find("fast")) << "banned candidate served again: " << to_string(c.source);
}

TEST_F(Serving, ALiveBanRetractsEverySizeItsBucketsChoiceWasServedTo) {
  std::atomic<bool> throws{false};
  auto op = bucketed_op([&throws](const std::string& name, fakes::FakeArgs&) {
    if (name == "fast" && throws) throw std::runtime_error("live boom");
  });
  Tuner tuner(dev_, quiet());
  for (int n : {100, 120}) ASSERT_EQ(tuner.select(*op, Key{{"n", n}}).index, *op->find("fast"));
  throws = true;
  fakes::FakeArgs at100{std::vector<float>(100)};
  EXPECT_THROW(tuner.run(*op, at100), std::runtime_error);
  throws = false;
  EXPECT_FALSE(tuner.settled(*op, Key{{"n", 120}}).has_value());  // the bucket's other size too
  EXPECT_NE(tuner.select(*op, Key{{"n", 120}}).index, *op->find("fast"));
}

TEST_F(Serving, ACandidateBannedWhileASearchChoosesItIsNeitherKeptNorServed) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast", "faster"}, "def");
  fakes::FakeArgs args{std::vector<float>(4)};
  const Key key = op->key_of(args);
  Tuner tuner(dev_, quiet());
  ASSERT_EQ(tuner.select(*op, key).index, *op->find("faster"));
  std::atomic<bool> once{false};
  std::thread::id live_thread;
  std::mutex m;
  dev_.behaviour["faster"].hook = [&] {
    std::lock_guard l(m);
    if (std::this_thread::get_id() == live_thread) throw std::runtime_error("live boom");
  };
  dev_.behaviour["def"].hook = [&] {
    if (once.exchange(true)) return;
    std::thread b([&] {
      {
        std::lock_guard l(m);
        live_thread = std::this_thread::get_id();
      }
      fakes::FakeArgs a{std::vector<float>(4)};
      try {
        tuner.run(*op, a);
        ADD_FAILURE() << "no throw";
      } catch (const std::runtime_error&) {
      }
    });
    b.join();
  };
  tuner.tune(*op, key);  // in flight while the live failure bans 'faster'
  dev_.behaviour["def"].hook = nullptr;
  EXPECT_NE(tuner.select(*op, key).index, *op->find("faster")) << "banned candidate republished";
  Tuner later(dev_, quiet(Mode::cached));
  TuneReport r;
  later.select(*op, key, &r);
  EXPECT_FALSE(later.store()->bans().empty());
  EXPECT_NE(r.winner_name, "faster") << "store serves a candidate its own ban table bans";
}

TEST_F(Serving, AValidationRunWhoseCandidateCallsBackFromAnotherThreadDoesNotDeadlock) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  {
    Tuner t(dev_, quiet());
    t.select(*op, Key{{"n", 4}});
    t.select(*op, Key{{"n", 8}});
  }
  Tuner tuner(dev_, quiet(Mode::cached));
  std::atomic<bool> armed{true};
  std::atomic<bool> deadlocked{false};
  dev_.behaviour["fast"].hook = [&] {
    if (!armed.exchange(false)) return;
    // e.g. a candidate that parallelises over a pool whose workers call a tuned sub-op
    auto f = std::async(std::launch::async, [&] { return tuner.select(*op, Key{{"n", 8}}); });
    if (f.wait_for(std::chrono::seconds(3)) == std::future_status::timeout) {
      deadlocked = true;
      new std::future<Choice>(std::move(f));  // leak: let it finish after the lock drops
    }
  };
  tuner.select(*op, Key{{"n", 4}});
  EXPECT_FALSE(deadlocked.load())
      << "nested select from a pool thread waited on the Revalidator mutex";
}

TEST_F(Serving, ALiveFailureLeavesAnotherWinnersStoredEntryServing) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast", "faster"}, "def");
  fakes::FakeArgs args{std::vector<float>(4)};
  const Key key = op->key_of(args);
  Tuner p1(dev_, quiet());
  ASSERT_EQ(p1.select(*op, key).index, *op->find("faster"));
  dev_.behaviour["faster"].seconds = 5e-3;  // another process re-tunes: 'fast' wins now
  {
    Tuner p2(dev_, quiet());
    ASSERT_EQ(p2.tune(*op, key).winner_name, "fast");
  }
  dev_.behaviour["faster"].throw_at_launch = true;
  EXPECT_THROW(p1.run(*op, args), std::runtime_error);
  dev_.behaviour["faster"].throw_at_launch = false;
  auto e = p1.store()->find(p1.identity(*op, key).digest().hex());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->winner, "fast");
  EXPECT_TRUE(e->stale.empty()) << "fast's good entry marked stale: " << e->stale;
}

TEST_F(Serving, AnArtifactOfACandidateTheStoreBansIsNotServed) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast", "faster"}, "def");
  fakes::FakeArgs args{std::vector<float>(4)};
  const Key key = op->key_of(args);
  TunerOptions f = quiet(Mode::force);
  f.persist.artifact_dir = (dir_ / "art").string();
  fs::create_directories(dir_ / "art");
  {
    Tuner t(dev_, f);
    ASSERT_EQ(t.select(*op, key).index, *op->find("faster"));
  }
  TunerOptions o = quiet();
  o.persist.artifact_dir = f.persist.artifact_dir;
  {
    Tuner t(dev_, o);
    t.select(*op, key);
    dev_.behaviour["faster"].throw_at_launch = true;
    EXPECT_THROW(t.run(*op, args), std::runtime_error);
    dev_.behaviour["faster"].throw_at_launch = false;
  }
  Tuner later(dev_, o);
  TuneReport r;
  const Choice c = later.select(*op, key, &r);
  EXPECT_NE(r.winner_name, "faster")
      << "source " << to_string(c.source) << " serves a store-banned candidate";
}

}  // namespace
}  // namespace tunekit
