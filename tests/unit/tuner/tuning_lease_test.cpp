// Tuning leases in the tuner (src/tuner/tuning_lease_hold.cpp, SearchSource): two Tuners on
// two fake devices of one identity share a store file with no device lock, as two processes
// (or two machines sharing a server store) would; only the lease keeps them off one key.
#include "tuner/tuning_lease_hold.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using fakes::make_fake_op;

// A search that blocks in its first launch of the default until released.
struct SearchGate {
  std::mutex m;
  std::condition_variable cv;
  bool entered = false;
  bool open = false;
  void block() {
    std::unique_lock lock(m);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void wait_entered() {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return entered; });
  }
  void release() {
    std::lock_guard lock(m);
    open = true;
    cv.notify_all();
  }
};

class TuningLeases : public ::testing::Test {
 protected:
  TuningLeases() {
    for (FakeDevice* d : {&first_, &second_}) {
      d->behaviour["def"].seconds = 2e-3;
      d->behaviour["fast"].seconds = 1e-3;
    }
    options_.persist.store = "sqlite:" + (dir_ / "choices.db").string();
    options_.persist.lock_dir = "none";
    options_.hooks.log = Log::warnings_to([this](std::string_view m) {
      std::lock_guard lock(warnings_mutex_);
      warnings_.emplace_back(m);
    });
  }
  std::unique_ptr<Store> probe() {
    return open_store(options_.persist.store, [](std::string_view m) { ADD_FAILURE() << m; });
  }

  testing::TempDir dir_;
  FakeDevice first_;
  FakeDevice second_;  // the other process: the same identity
  TunerOptions options_;
  std::mutex warnings_mutex_;
  std::vector<std::string> warnings_;
};

TEST_F(TuningLeases, TheSearchHoldsItsLeaseRenewedAndReleasesItOnceTheChoiceIsStored) {
  options_.persist.lease_ttl_seconds = 0.06;
  auto store = probe();
  ASSERT_TRUE(store);
  std::vector<TuningLease> during;
  LeaseState another = LeaseState::unavailable;
  bool seen = false;
  first_.behaviour["def"].hook = [&] {
    if (seen) return;
    seen = true;
    during = store->leases();
    // Several TTLs later the lease is still live: the heartbeat renewed it.
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    TuningLease other;
    other.identity_digest = during.empty() ? "" : during[0].identity_digest;
    other.holder = "someone-else";
    another = store->take_lease(other, std::chrono::milliseconds(1000)).state;
  };
  auto op = make_fake_op(first_, {"def", "fast"}, "def");
  Tuner tuner(first_, options_);
  TuneReport r;
  ASSERT_EQ(tuner.select(*op, Key{{"n", 1}}, &r).source, Source::searched) << r.reason;
  ASSERT_EQ(during.size(), 1u);
  EXPECT_EQ(during[0].op, "fake");
  EXPECT_EQ(during[0].key, Key({{"n", 1}}).text());
  EXPECT_EQ(another, LeaseState::busy);
  EXPECT_TRUE(store->leases().empty()) << "released after the search";
  EXPECT_TRUE(store->find(during[0].identity_digest));
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];
}

TEST_F(TuningLeases, AMissWhileAnotherHolderTunesTheKeyIsServedTheDefaultThenItsChoice) {
  SearchGate gate;
  first_.behaviour["def"].hook = [&] { gate.block(); };
  auto op1 = make_fake_op(first_, {"def", "fast"}, "def");
  std::atomic<int> second_inputs{0};
  auto op2 = make_fake_op(second_, {"def", "fast"}, "def", &second_inputs);
  Tuner holder(first_, options_);
  Tuner other(second_, options_);
  std::thread search([&] { holder.select(*op1, Key{{"n", 1}}); });
  gate.wait_entered();
  TuneReport r;
  EXPECT_EQ(other.select(*op2, Key{{"n", 1}}, &r).source, Source::use_default);
  EXPECT_NE(r.reason.find("another process is tuning this key (lease of "), std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find(std::to_string(::getpid())), std::string::npos) << r.reason;
  gate.release();
  search.join();
  EXPECT_EQ(other.select(*op2, Key{{"n", 1}}, &r).source, Source::cache_replay) << r.reason;
  EXPECT_EQ(r.winner_name, "fast");
  EXPECT_EQ(second_inputs.load(), 1);  // one validation run of the stored choice, no search
}

TEST_F(TuningLeases, AWaiterServesTheHoldersChoiceWithoutSearching) {
  SearchGate gate;
  first_.behaviour["def"].hook = [&] { gate.block(); };
  auto op1 = make_fake_op(first_, {"def", "fast"}, "def");
  std::atomic<int> second_inputs{0};
  auto op2 = make_fake_op(second_, {"def", "fast"}, "def", &second_inputs);
  Tuner holder(first_, options_);
  TunerOptions waiting = options_;
  waiting.persist.wait_for_device_seconds = 30;
  Tuner waiter(second_, waiting);
  std::thread search([&] { holder.select(*op1, Key{{"n", 1}}); });
  gate.wait_entered();
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.release();
  });
  TuneReport r;
  EXPECT_EQ(waiter.select(*op2, Key{{"n", 1}}, &r).source, Source::cache_replay) << r.reason;
  release.join();
  search.join();
  EXPECT_EQ(r.winner_name, "fast");
  EXPECT_EQ(second_inputs.load(), 1);
}

TEST_F(TuningLeases, AWaitPastItsLimitServesTheDefaultSayingHowLongItWaited) {
  SearchGate gate;
  first_.behaviour["def"].hook = [&] { gate.block(); };
  auto op1 = make_fake_op(first_, {"def", "fast"}, "def");
  auto op2 = make_fake_op(second_, {"def", "fast"}, "def");
  Tuner holder(first_, options_);
  TunerOptions waiting = options_;
  waiting.persist.wait_for_device_seconds = 0.1;
  Tuner waiter(second_, waiting);
  std::thread search([&] { holder.select(*op1, Key{{"n", 1}}); });
  gate.wait_entered();
  TuneReport r;
  EXPECT_EQ(waiter.select(*op2, Key{{"n", 1}}, &r).source, Source::use_default);
  gate.release();
  search.join();
  EXPECT_NE(r.reason.find("waited "), std::string::npos) << r.reason;
}

TEST_F(TuningLeases, ANoTtlTakesNoLease) {
  options_.persist.lease_ttl_seconds = 0;
  auto store = probe();
  ASSERT_TRUE(store);
  std::size_t during = 99;
  first_.behaviour["def"].hook = [&] { during = store->leases().size(); };
  auto op = make_fake_op(first_, {"def", "fast"}, "def");
  Tuner tuner(first_, options_);
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}).source, Source::searched);
  EXPECT_EQ(during, 0u);
}

TEST(TuningLeaseOptions, ABadTtlIsAUsageError) {
  FakeDevice dev;
  for (double ttl : {-1.0, 0.001, 1e9, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    TunerOptions o;
    o.persist.lease_ttl_seconds = ttl;
    EXPECT_THROW(Tuner(dev, o), UsageError) << ttl;
  }
}

TEST(TuningLeaseOptions, TheTtlIsReadFromTheEnvironment) {
  auto with = [](const char* value) {
    return [value](const char* name) -> const char* {
      return std::string_view(name) == "TUNEKIT_LEASE_TTL" ? value : nullptr;
    };
  };
  EXPECT_EQ(TunerOptions::from_environment(with(nullptr)).persist.lease_ttl_seconds, 30);
  EXPECT_EQ(TunerOptions::from_environment(with("120")).persist.lease_ttl_seconds, 120);
  for (const char* bad : {"0", "-5", "abc", "10s", "1e9", "nan"}) {
    try {
      (void)TunerOptions::from_environment(with(bad));
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("TUNEKIT_LEASE_TTL"), std::string::npos) << e.what();
    }
  }
}

TEST(LeaseRefusal, NamesTheHolderAndTheTimeLeft) {
  TuningLease other;
  other.holder = "node7:4242:1:1";
  other.expires_at_ms = 11500;
  const std::string why = detail::lease_refusal(other, 10000, 0);
  EXPECT_NE(why.find("node7:4242:1:1"), std::string::npos) << why;
  EXPECT_NE(why.find("1.5 s left"), std::string::npos) << why;
  EXPECT_EQ(why.find("waited"), std::string::npos) << why;
  EXPECT_NE(detail::lease_refusal(other, 12000, 2).find("0.0 s left"), std::string::npos);
}

// A holder name of this host and pid space ("host:PID:SPACE.START:N"), with another pid and
// start time.
std::string holder_of_this_host(const std::string& pid, const std::string& start) {
  const std::string mine = lease_holder_name(7);
  const auto last = mine.rfind(':');
  const auto start_end = mine.rfind(':', last - 1);
  const auto pid_end = mine.rfind(':', start_end - 1);
  const std::string my_start = mine.substr(start_end + 1, last - start_end - 1);
  const std::string space = my_start.substr(0, my_start.rfind('.'));
  return mine.substr(0, pid_end) + ":" + pid + ":" + space + "." + start + ":1";
}

TEST(LeaseHolders, OnlyAGoneProcessOfThisHostIsJudgedGone) {
  const std::string mine = lease_holder_name(7);
  EXPECT_FALSE(lease_holder_is_gone(mine));
  // This pid with another start time: the pid was reused.
  EXPECT_TRUE(lease_holder_is_gone(holder_of_this_host(std::to_string(::getpid()), "1")));
  // A pid no process has (above the kernel's pid_max of 2^22).
  EXPECT_TRUE(lease_holder_is_gone(holder_of_this_host("99999999", "12345")));
  EXPECT_FALSE(lease_holder_is_gone("another-host:99999999:x-1.12345:1"));
  // Another boot or pid namespace of this host name: only its lease's expiry frees it.
  std::string other_space = holder_of_this_host("99999999", "12345");
  const auto dot = other_space.rfind('.');
  const auto colon = other_space.rfind(':', dot);
  other_space.replace(colon + 1, dot - colon - 1, "00000000-1");
  EXPECT_FALSE(lease_holder_is_gone(other_space)) << other_space;
  for (const char* odd : {"", "x", "a:b", ":::", "host:12x:3:1", "someone-else"})
    EXPECT_FALSE(lease_holder_is_gone(odd)) << odd;
}

TEST_F(TuningLeases, ALeaseOfADeadProcessOfThisHostIsTakenOverAtOnce) {
  options_.persist.lease_ttl_seconds = 3600;  // it would never expire within the test
  auto store = probe();
  ASSERT_TRUE(store);
  auto op = make_fake_op(first_, {"def", "fast"}, "def");
  Tuner tuner(first_, options_);
  // The identity's digest from a first search; then a dead holder of this host takes its
  // lease for an hour.
  TuneReport first;
  ASSERT_EQ(tuner.select(*op, Key{{"n", 1}}, &first).source, Source::searched);
  const auto entries = store->list("fake");
  ASSERT_EQ(entries.size(), 1u);
  TuningLease dead;
  dead.identity_digest = entries[0].identity_digest;
  dead.holder = holder_of_this_host("99999999", "12345");
  ASSERT_EQ(store->take_lease(dead, std::chrono::hours(1)).state, LeaseState::held);
  TunerOptions again = options_;
  again.decide.mode = Mode::force;  // search although the store has it
  Tuner other(second_, again);
  auto op2 = make_fake_op(second_, {"def", "fast"}, "def");
  TuneReport r;
  EXPECT_EQ(other.select(*op2, Key{{"n", 1}}, &r).source, Source::searched) << r.reason;
  EXPECT_TRUE(store->leases().empty());
}

}  // namespace
}  // namespace tunekit
