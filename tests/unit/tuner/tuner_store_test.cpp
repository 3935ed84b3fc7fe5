// The tuner with a persistent store (src/tuner/tuner.cpp): lookup order memory -> store ->
// search, identity mismatches, what is persisted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

class TunerStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tunekit-tuner-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
  }
  void TearDown() override { fs::remove_all(dir_); }

  TunerOptions options() const {
    TunerOptions o;
    o.persist.store = "sqlite:" + (dir_ / "choices.db").string();
    o.hooks.log =
        Log::warnings_to([](std::string_view m) { ADD_FAILURE() << "unexpected warning: " << m; });
    return o;
  }

  fs::path dir_;
  fakes::FakeDevice dev_;
};

TEST_F(TunerStore, SecondTunerReplaysFromTheStore) {
  std::atomic<int> searches{0};
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def", &searches);
  Key key{{"n", 4}};
  {
    Tuner first(dev_, options());
    EXPECT_EQ(first.select(*op, key).source, Source::searched);
    ASSERT_NE(first.store(), nullptr);
    auto entries = first.store()->list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].winner, "fast");
    EXPECT_EQ(entries[0].key, "n=4");
    ASSERT_EQ(entries[0].evidence.size(), 2u);  // full evidence
    EXPECT_EQ(entries[0].evidence[0].name, "def");
  }
  Tuner second(dev_, options());
  TuneReport r;
  Choice c = second.select(*op, key, &r);
  EXPECT_EQ(c.source, Source::cache_replay);
  EXPECT_EQ(r.winner_name, "fast");
  // The replay shows the evidence it was decided on.
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_DOUBLE_EQ(r.speedup, 2.0);
  EXPECT_TRUE(r.candidates[1].winner);
  ASSERT_TRUE(r.candidates[1].timing.has_value());
  EXPECT_EQ(r.candidates[1].timing->samples.size(), 25u);
  EXPECT_EQ(second.select(*op, key).source, Source::memory_hit);
  EXPECT_EQ(searches.load(), 2);  // the search, then one validation run of the replayed choice

  // cached mode serves the store; force searches again.
  TunerOptions cached = options();
  cached.decide.mode = Mode::cached;
  EXPECT_EQ(Tuner(dev_, cached).select(*op, key).source, Source::cache_replay);
  TunerOptions force = options();
  force.decide.mode = Mode::force;
  EXPECT_EQ(Tuner(dev_, force).select(*op, key).source, Source::searched);
  EXPECT_EQ(searches.load(), 4);  // a validation run for the cached tuner, a search for force
}

TEST_F(TunerStore, EveryIdentityFieldMismatchIsAMiss) {
  std::atomic<int> searches{0};
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def", &searches);
  Key key{{"n", 4}};
  Tuner(dev_, options()).select(*op, key);
  ASSERT_EQ(searches.load(), 1);
  auto expect_search = [&](Tuner& t, const OpBase& o, const Key& k, const char* what) {
    int before = searches.load();
    EXPECT_EQ(t.select(o, k).source, Source::searched) << what;
    EXPECT_EQ(searches.load(), before + 1) << what;
  };
  {  // key
    Tuner t(dev_, options());
    expect_search(t, *op, Key{{"n", 5}}, "key");
  }
  {  // environment tag
    Tuner t(dev_, options());
    t.set_environment_tags({{"power", "battery"}});
    expect_search(t, *op, key, "environment tag");
  }
  {  // numerics policy
    TunerOptions o = options();
    o.decide.numerics_policy = Numerics::bitwise;
    Tuner t(dev_, o);
    expect_search(t, *op, key, "numerics policy");
  }
  {  // candidate set
    fakes::FakeDevice same;
    same.behaviour = dev_.behaviour;
    std::atomic<int> other_searches{0};
    auto other = fakes::make_fake_op(same, {"def", "fast", "extra"}, "def", &other_searches);
    Tuner t(same, options());
    EXPECT_EQ(t.select(*other, key).source, Source::searched);
    EXPECT_EQ(other_searches.load(), 1);
  }
  {  // device
    fakes::FakeDevice elsewhere;
    elsewhere.behaviour = dev_.behaviour;
    const_cast<DeviceIdentity&>(elsewhere.identity()).product = "another fake device";
    std::atomic<int> other_searches{0};
    auto other = fakes::make_fake_op(elsewhere, {"def", "fast"}, "def", &other_searches);
    ASSERT_EQ(other->checksum(), op->checksum());
    Tuner t(elsewhere, options());
    EXPECT_EQ(t.select(*other, key).source, Source::searched);
    EXPECT_EQ(other_searches.load(), 1);
  }
  {  // the same identity again is a hit
    Tuner t(dev_, options());
    EXPECT_EQ(t.select(*op, key).source, Source::cache_replay);
  }
}

TEST_F(TunerStore, ToolchainIsPartOfTheIdentity) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner t(dev_, options());
  Identity id = t.identity(*op, Key{{"n", 1}});
  EXPECT_FALSE(id.toolchain.tunekit_version.empty());
  EXPECT_FALSE(id.toolchain.compiler.empty());
  Identity other = id;
  other.toolchain.compiler += "-patched";
  EXPECT_NE(other.digest(), id.digest());
  other = id;
  other.toolchain.runtimes.push_back("pocl 5.0");
  EXPECT_NE(other.digest(), id.digest());
}

TEST_F(TunerStore, UnmeasuredDecisionsAreNotPersisted) {
  dev_.behaviour["def"].throw_at_launch = true;  // nothing measures cleanly
  dev_.behaviour["fast"].wrong = true;
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner t(dev_, options());
  TuneReport r;
  t.select(*op, Key{{"n", 3}}, &r);
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_NE(r.reason.find("memory for this session"), std::string::npos) << r.reason;
  EXPECT_TRUE(t.store()->list().empty());
}

TEST_F(TunerStore, UnknownDeviceIdentityStaysInMemory) {
  const_cast<DeviceIdentity&>(dev_.identity()).known = false;
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner t(dev_, options());
  TuneReport r;
  t.select(*op, Key{{"n", 3}}, &r);
  EXPECT_EQ(r.winner_name, "fast");
  EXPECT_NE(r.reason.find("device identity unknown"), std::string::npos) << r.reason;
  EXPECT_TRUE(t.store()->list().empty());
}

TEST_F(TunerStore, EnvironmentTagsAreFrozenAfterFirstUse) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner t(dev_, options());
  t.set_environment_tags({{"flags", "-O3"}});
  t.select(*op, Key{{"n", 3}});
  EXPECT_THROW(t.set_environment_tags({{"flags", "-O0"}}), UsageError);
}

TEST_F(TunerStore, UnusableStoreFileMeansMemoryOnlyWithAWarning) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "choices.db") << "not a database";
  std::vector<std::string> warnings;
  TunerOptions o = options();
  o.hooks.log = Log::warnings_to([&](std::string_view m) { warnings.emplace_back(m); });
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner t(dev_, o);
  EXPECT_EQ(t.store(), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(t.select(*op, Key{{"n", 3}}).source, Source::searched);
}

}  // namespace
}  // namespace tunekit
