// Tuner::tune_deferred (DESIGN §7 "Deferred"): the report first; build() ships the winner at
// most once, memoised, with an advisory fallback to the default.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/deferred.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

// Arguments that count how many copies are alive: a workload still held shows up.
struct CountedArgs {
  std::vector<float> out;
  std::shared_ptr<int> alive;
};

class DeferredBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
    dev_.set_candidate_names({"def", "fast"});
    op_ = std::make_unique<Op<CountedArgs>>("deferred", 1);
    op_->key([](const CountedArgs& a) {
         return Key{{"n", static_cast<long>(a.out.size())}};
       })
        .inputs([this](const Key& k) {
          return CountedArgs{std::vector<float>(static_cast<std::size_t>(k.integer("n"))), alive_};
        })
        .outputs([](CountedArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
        .reference([](CountedArgs& a) {
          for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
        })
        .build([this](const Config& c) {
          const std::string name = c["impl"].as_string();
          ++built_[name];
          if (fatal_ == name) throw FatalError("fake: the device was lost while building");
          if (broken_.count(name))
            return Outcome{Status::compile_failed, "fake: " + name + " does not build"};
          return Outcome::success();
        });
    for (const std::string name : {"def", "fast"}) {
      Candidate c;
      c.name = name;
      c.config.set("impl", Value(name));
      op_->candidate(std::move(c), [this, name](CountedArgs& a) {
        dev_.running = name;
        for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
      });
    }
    op_->default_candidate("def");
  }

  TunerOptions options() {
    TunerOptions o;
    o.hooks.on_fallback = [this](std::string_view name, const Outcome& cause) {
      heard_.push_back("fallback " + std::string(name) + ": " + cause.message);
    };
    o.hooks.on_unrecovered = [this](std::string_view name, const Outcome& cause) {
      heard_.push_back("unrecovered " + std::string(name) + ": " + cause.message);
    };
    return o;
  }

  fakes::FakeDevice dev_;
  std::unique_ptr<Op<CountedArgs>> op_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  std::map<std::string, int> built_;
  std::set<std::string> broken_;
  std::string fatal_;
  std::vector<std::string> heard_;
  const Key key_{{"n", 8}};
};

TEST_F(DeferredBuild, TheReportComesFirstAndBuildShipsTheWinnerOnce) {
  Tuner tuner(dev_, options());
  Deferred d = tuner.tune_deferred(*op_, key_);
  EXPECT_EQ(d.report().winner_name, "fast");
  EXPECT_EQ(d.report().source, Source::searched);
  EXPECT_EQ(d.builds(), 0u);
  EXPECT_FALSE(d.built());
  const int fast_builds = built_["fast"];  // the search's compile pass

  const Built& first = d.build();
  EXPECT_EQ(first.candidate, "fast");
  EXPECT_EQ(first.index, *op_->find("fast"));
  EXPECT_FALSE(first.shipped_default);
  EXPECT_FALSE(d.shipped_default());
  EXPECT_TRUE(d.built());
  EXPECT_EQ(d.builds(), 1u);
  EXPECT_EQ(built_["fast"], fast_builds + 1);

  const Built& second = d.build();  // memoised: the same result, nothing built
  EXPECT_EQ(&second, &first);
  EXPECT_EQ(d.builds(), 1u);
  EXPECT_EQ(built_["fast"], fast_builds + 1);
  EXPECT_TRUE(heard_.empty());
}

// A moved-from Deferred is misuse: a clear UsageError, not a null dereference of its mutex.
TEST_F(DeferredBuild, AMovedFromDeferredIsAUsageError) {
  Tuner tuner(dev_, options());
  Deferred d = tuner.tune_deferred(*op_, key_);
  Deferred moved = std::move(d);
  EXPECT_THROW((void)d.build(), UsageError);   // NOLINT(bugprone-use-after-move): the point
  EXPECT_THROW((void)d.builds(), UsageError);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.build().candidate, "fast");
  EXPECT_EQ(moved.builds(), 1u);
}

TEST_F(DeferredBuild, DroppingItUnbuiltCostsNothing) {
  Tuner tuner(dev_, options());
  std::map<std::string, int> before;
  {
    Deferred d = tuner.tune_deferred(*op_, key_);
    EXPECT_EQ(alive_.use_count(), 1);  // every workload of the search is released
    before = built_;
  }
  EXPECT_EQ(built_, before);
  EXPECT_EQ(alive_.use_count(), 1);
}

TEST_F(DeferredBuild, TheDefaultShipsWhenTheWinnersRebuildFails) {
  Tuner tuner(dev_, options());
  Deferred d = tuner.tune_deferred(*op_, key_);
  ASSERT_EQ(d.report().winner_name, "fast");
  broken_.insert("fast");  // e.g. a driver that fails on the second build
  const Built& b = d.build();
  EXPECT_TRUE(b.shipped_default);
  EXPECT_TRUE(d.shipped_default());
  EXPECT_EQ(b.candidate, "def");
  EXPECT_EQ(b.cause.status, Status::compile_failed);
  EXPECT_EQ(d.builds(), 2u);
  ASSERT_EQ(heard_.size(), 1u);
  EXPECT_EQ(heard_[0], "fallback fast: fake: fast does not build");
  EXPECT_EQ(&d.build(), &b);
  EXPECT_EQ(d.builds(), 2u);
}

TEST_F(DeferredBuild, AFailureOfTheDefaultPropagatesAndTheSameErrorIsRethrown) {
  Tuner tuner(dev_, options());
  Deferred d = tuner.tune_deferred(*op_, key_);
  broken_ = {"fast", "def"};
  const std::exception* first = nullptr;
  try {
    d.build();
    FAIL() << "a default that does not build was silent";
  } catch (const TrialError& e) {
    first = &e;
    EXPECT_EQ(e.status(), Status::compile_failed);
    EXPECT_NE(std::string(e.what()).find("def failed to build"), std::string::npos) << e.what();
  }
  EXPECT_EQ(d.builds(), 2u);
  try {
    d.build();
    FAIL() << "the memoised error was not rethrown";
  } catch (const TrialError& e) {
    EXPECT_EQ(&e, first);  // the same exception object
  }
  EXPECT_EQ(d.builds(), 2u);
  EXPECT_FALSE(d.built());
  EXPECT_EQ(heard_, (std::vector<std::string>{"fallback fast: fake: fast does not build",
                                              "unrecovered def: fake: def does not build"}));
}

TEST_F(DeferredBuild, FallbackIfDecidesWhichFailuresAreRecovered) {
  TunerOptions o = options();
  o.hooks.fallback_if = [](const Outcome& cause) { return cause.status != Status::compile_failed; };
  Tuner tuner(dev_, o);
  Deferred d = tuner.tune_deferred(*op_, key_);
  broken_.insert("fast");
  EXPECT_THROW(d.build(), TrialError);
  EXPECT_EQ(d.builds(), 1u);  // the default was never built
  EXPECT_EQ(heard_, (std::vector<std::string>{"unrecovered fast: fake: fast does not build"}));
}

TEST_F(DeferredBuild, AFatalErrorPropagatesWithoutRetry) {
  Tuner tuner(dev_, options());
  Deferred d = tuner.tune_deferred(*op_, key_);
  fatal_ = "fast";
  EXPECT_THROW(d.build(), FatalError);
  EXPECT_EQ(d.builds(), 1u);
  EXPECT_THROW(d.build(), FatalError);
  EXPECT_EQ(d.builds(), 1u);
  EXPECT_TRUE(heard_.empty());
}

TEST_F(DeferredBuild, TheWinnerBeingTheDefaultShipsItWithoutAFallback) {
  dev_.behaviour["fast"].seconds = 4e-3;
  Tuner tuner(dev_, options());
  Deferred d = tuner.tune_deferred(*op_, key_);
  ASSERT_EQ(d.report().winner_name, "def");
  const Built& b = d.build();
  EXPECT_EQ(b.candidate, "def");
  EXPECT_FALSE(b.shipped_default);  // the reported pick shipped
  EXPECT_EQ(d.builds(), 1u);
}

}  // namespace
}  // namespace tunekit
