// Single flight in src/tuner/tuner.cpp: many threads missing one key, one search.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "fakes/fake_device.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

TEST(SingleFlight, SixteenThreadsOneTuneOthersGetTheDefaultAtOnce) {
  constexpr int kThreads = 16;
  fakes::FakeDevice dev;
  dev.behaviour["def"].seconds = 2e-3;
  dev.behaviour["fast"].seconds = 1e-3;
  std::atomic<int> searches{0};
  std::atomic<int> got_default{0};
  // The search blocks inside its first launch until every other caller has been answered:
  // that can only happen if they were answered without waiting for it.
  dev.behaviour["def"].hook = [&] {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (got_default.load() < kThreads - 1 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  };
  auto op = fakes::make_fake_op(dev, {"def", "fast"}, "def", &searches);
  op->checksum();  // seal before the threads start
  Tuner tuner(dev);
  Key key{{"n", 16}};
  std::vector<Source> sources(kThreads);
  std::vector<std::string> reasons(kThreads);
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      TuneReport r;
      sources[t] = tuner.select(*op, key, &r).source;
      reasons[t] = r.reason;
      if (sources[t] == Source::use_default) ++got_default;
    });
  }
  go = true;
  for (auto& th : threads) th.join();

  EXPECT_EQ(searches.load(), 1);
  int searched = 0;
  for (int t = 0; t < kThreads; ++t) {
    if (sources[t] == Source::searched) {
      ++searched;
    } else {
      EXPECT_EQ(sources[t], Source::use_default);
      EXPECT_EQ(reasons[t], "another caller is tuning this key");
    }
  }
  EXPECT_EQ(searched, 1);
  EXPECT_EQ(got_default.load(), kThreads - 1);
  EXPECT_EQ(tuner.select(*op, key).source, Source::memory_hit);
}

TEST(SingleFlight, ConcurrentHitsAndMissesOnManyKeys) {
  fakes::FakeDevice dev;
  dev.behaviour["def"].seconds = 2e-3;
  dev.behaviour["fast"].seconds = 1e-3;
  auto op = fakes::make_fake_op(dev, {"def", "fast"}, "def");
  op->checksum();
  Tuner tuner(dev);
  // One thread tunes keys one after another (growing the table); readers hammer key 1.
  Key first{{"n", 1}};
  tuner.select(*op, first);
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  std::atomic<long> hits{0};
  std::atomic<long> reads{0};
  std::atomic<int> started{0};
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      ++started;
      do {
        ++reads;
        if (tuner.select(*op, first).source == Source::memory_hit) ++hits;
      } while (!done.load());
    });
  }
  while (started.load() < 3) std::this_thread::yield();
  for (int n = 2; n < 200; ++n) tuner.select(*op, Key{{"n", n}});
  done = true;
  for (auto& th : readers) th.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(hits.load(), reads.load());  // the table growing never hides an entry
  for (int n = 1; n < 200; ++n)
    EXPECT_EQ(tuner.select(*op, Key{{"n", n}}).source, Source::memory_hit) << n;
}

}  // namespace
}  // namespace tunekit
