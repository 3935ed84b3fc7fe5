// Tests for src/tuner/admission.cpp: the working set of a key against the device's memory.
#include "tuner/admission.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

DeviceIdentity device_with(std::uint64_t memory_bytes) {
  DeviceIdentity d;
  d.backend = "fake";
  d.product = "fake gpu";
  d.memory_bytes = memory_bytes;
  d.known = true;
  return d;
}

// An op whose default moves n GiB of inputs and outputs (the key's field n).
std::unique_ptr<Op<fakes::FakeArgs>> op_with_work(fakes::FakeDevice& dev) {
  auto op = fakes::make_fake_op(dev, {"def", "fast"}, "def");
  op->work([](const Key& key, const Candidate&) -> std::optional<Work> {
    if (key.integer("n") < 0) throw std::runtime_error("no model for a negative n");
    Work w;
    w.compulsory_bytes = static_cast<double>(key.integer("n")) * kGiB;
    return w;
  });
  return op;
}

TEST(WorkingSetRefusal, AShapeOverTheDevicesMemoryIsRefusedWithBothSizes) {
  fakes::FakeDevice dev;
  const auto op = op_with_work(dev);
  const auto refusal = detail::working_set_refusal(*op, Key{{"n", 96}}, device_with(24 * kGiB));
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("needs 96.0 GiB of inputs and outputs"), std::string::npos) << *refusal;
  EXPECT_NE(refusal->find("has 24.0 GiB"), std::string::npos) << *refusal;
  EXPECT_NE(refusal->find("n=96"), std::string::npos) << *refusal;  // which key
}

TEST(WorkingSetRefusal, AShapeThatFitsIsAdmitted) {
  fakes::FakeDevice dev;
  const auto op = op_with_work(dev);
  EXPECT_FALSE(detail::working_set_refusal(*op, Key{{"n", 24}}, device_with(24 * kGiB)));
  EXPECT_FALSE(detail::working_set_refusal(*op, Key{{"n", 1}}, device_with(24 * kGiB)));
}

TEST(WorkingSetRefusal, NoJudgementWithoutAWorkModelOrAKnownMemory) {
  fakes::FakeDevice dev;
  const auto op = op_with_work(dev);
  EXPECT_FALSE(detail::working_set_refusal(*op, Key{{"n", 96}}, device_with(0)));  // unknown
  const auto plain = fakes::make_fake_op(dev, {"def", "fast"}, "def");
  EXPECT_FALSE(detail::working_set_refusal(*plain, Key{{"n", 96}}, device_with(24 * kGiB)));
  // A work model that throws is the search's to classify, not a refusal.
  EXPECT_FALSE(detail::working_set_refusal(*op, Key{{"n", -1}}, device_with(24 * kGiB)));
}

}  // namespace
}  // namespace tunekit
