// Tests for the typed key's hot path (src/tuner/memory_source.cpp, Tuner::run): a choice
// published for a Key is found from the raw values, a retracted one is not, mode off serves
// the default, and a bucket's representative serves no other size from the hot index.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"
#include "tuner/memory_source.hpp"

namespace tunekit {
namespace {

// The fake op with a typed key: n, the output's length.
std::unique_ptr<Op<fakes::FakeArgs>> typed_fake_op(fakes::FakeDevice& dev,
                                                   const std::vector<std::string>& names) {
  auto op = fakes::make_fake_op(dev, names, "def");
  op->key({"n"}, [](const fakes::FakeArgs& a) {
    return KeyValues{static_cast<std::int64_t>(a.out.size())};
  });
  return op;
}

fakes::FakeArgs args_of(std::size_t n) {
  return fakes::FakeArgs{std::vector<float>(n)};
}

class HotKey : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
    dev_.behaviour["faster"].seconds = 0.5e-3;
  }
  static TunerOptions options(Mode mode = Mode::tune) {
    TunerOptions o;
    o.decide.mode = mode;
    return o;
  }
  fakes::FakeDevice dev_;
};

TEST_F(HotKey, MemorySourcePublishesAndRetractsTheHotEntryFromTheKey) {
  auto op = typed_fake_op(dev_, {"def", "fast"});
  const TunerOptions o = options();
  detail::MemorySource memory(dev_.identity(), o);
  const Key key{{"n", 4}};
  const Digest hot = op->hot_digest(op->key_values(args_of(4)));
  EXPECT_FALSE(memory.hot_hit(op->checksum(), hot).has_value());
  memory.publish(*op, key, 1);
  EXPECT_EQ(memory.hot_hit(op->checksum(), hot), std::optional<std::size_t>(1));
  EXPECT_EQ(memory.hit(op->checksum(), key.digest()), std::optional<std::size_t>(1));
  EXPECT_FALSE(memory.hot_hit(op->checksum(), op->hot_digest(op->key_values(args_of(5)))));
  memory.retract(*op, key);
  EXPECT_FALSE(memory.hot_hit(op->checksum(), hot).has_value());
  EXPECT_FALSE(memory.hit(op->checksum(), key.digest()).has_value());
  // A key under other names than the op declares gets no hot entry (only the canonical one).
  const Key other{{"length", 4}};
  memory.publish(*op, other, 1);
  EXPECT_EQ(memory.hit(op->checksum(), other.digest()), std::optional<std::size_t>(1));
  EXPECT_FALSE(memory.hot_hit(op->checksum(), hot).has_value());
}

TEST_F(HotKey, RunServesTheChosenCandidateFromTheValues) {
  auto op = typed_fake_op(dev_, {"def", "fast", "faster"});
  fakes::FakeArgs args = args_of(4);
  Tuner tuner(dev_, options());
  tuner.run(*op, args);  // the miss: searched, published under the Key
  ASSERT_EQ(tuner.settled(*op, op->key_of(args))->index, *op->find("faster"));
  dev_.running.clear();
  tuner.run(*op, args);
  EXPECT_EQ(dev_.running, "faster");
  EXPECT_EQ(args.out[3], 3.0f);
}

TEST_F(HotKey, ALiveFailureRetractsTheHotEntry) {
  auto op = typed_fake_op(dev_, {"def", "fast", "faster"});
  fakes::FakeArgs args = args_of(4);
  Tuner tuner(dev_, options());
  tuner.run(*op, args);
  dev_.behaviour["faster"].throw_at_launch = true;
  EXPECT_THROW(tuner.run(*op, args), std::runtime_error);  // the error reaches the caller
  // Still failing: a hot entry left behind would call it again; the retracted one misses, and
  // the search that follows leaves the banned candidate out.
  tuner.run(*op, args);
  EXPECT_EQ(dev_.running, "fast");
  tuner.run(*op, args);
  EXPECT_EQ(dev_.running, "fast");
}

TEST_F(HotKey, ModeOffServesTheDefaultEvenWithAPublishedChoice) {
  auto op = typed_fake_op(dev_, {"def", "fast"});
  fakes::FakeArgs args = args_of(4);
  Tuner tuner(dev_, options(Mode::off));
  ASSERT_EQ(tuner.tune(*op, op->key_of(args)).winner_name, "fast");  // published in memory
  tuner.run(*op, args);
  EXPECT_EQ(dev_.running, "def");
}

TEST_F(HotKey, ABucketsRepresentativeGivesNoHotHitForAnotherSize) {
  auto op = typed_fake_op(dev_, {"def", "fast"});
  op->bucket("n", Bucketing::pow2());
  fakes::FakeArgs at_128 = args_of(128);
  Tuner tuner(dev_, options());
  tuner.run(*op, at_128);  // searched at the representative 128, published under n=128
  ASSERT_EQ(tuner.settled(*op, Key{{"n", 128}})->index, *op->find("fast"));
  // At 100 the bucket's choice fails validation: the default must serve 100, which a hot
  // entry keyed by the representative's values would skip.
  dev_.behaviour["fast"].wrong = true;
  fakes::FakeArgs at_100 = args_of(100);
  tuner.run(*op, at_100);
  EXPECT_EQ(dev_.running, "def");
  tuner.run(*op, at_100);  // now from the hot entry of n=100 itself
  EXPECT_EQ(dev_.running, "def");
  tuner.run(*op, at_128);
  EXPECT_EQ(dev_.running, "fast");
}

TEST_F(HotKey, AWrongNumberOfValuesIsAClearError) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  op->key({"n", "dtype"}, [](const fakes::FakeArgs& a) {
    return KeyValues{static_cast<std::int64_t>(a.out.size())};
  });
  fakes::FakeArgs args = args_of(4);
  Tuner tuner(dev_, options());
  EXPECT_THROW(tuner.run(*op, args), UsageError);
}

}  // namespace
}  // namespace tunekit
