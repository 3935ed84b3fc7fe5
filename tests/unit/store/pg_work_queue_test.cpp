// Tests for src/store/pg_work_queue.cpp against a real server (TUNEKIT_TEST_POSTGRES_URL): the
// work items of shared searches leased once each under concurrent takers (FOR UPDATE SKIP
// LOCKED), renewed, re-leased after their holder's lease expires, finished only by their
// holder, abandoned as crashed after max_attempts, collected once; a file store has no queue.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/store.hpp"
#include "tunekit/work_queue.hpp"
#include "unit/store/store_under_test.hpp"

namespace tunekit {
namespace {

using std::chrono::milliseconds;

class PgWorkQueue : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!store_under_test_.problem().empty()) FAIL() << store_under_test_.problem();
    store_ = open_store(store_under_test_.spec(), [](std::string_view m) { ADD_FAILURE() << m; });
    ASSERT_TRUE(store_);
    std::string why;
    queue_ = store_->open_work_queue(why);
    ASSERT_TRUE(queue_) << why;
  }
  std::int64_t open(const std::string& digest = "d1") {
    return queue_->open_search({0, digest, "op", "n=1", "coordinator"});
  }
  static std::vector<std::pair<std::size_t, std::string>> points(std::size_t n) {
    std::vector<std::pair<std::size_t, std::string>> out;
    for (std::size_t i = 0; i < n; ++i) out.emplace_back(i, "x=" + std::to_string(i));
    return out;
  }

  testing::StoreUnderTest store_under_test_{"postgresql"};
  std::unique_ptr<Store> store_;
  std::unique_ptr<WorkQueue> queue_;
};

TEST_F(PgWorkQueue, SearchesAreListedUntilClosed) {
  const std::int64_t a = open("da");
  const std::int64_t b = open("db");
  auto open_ones = queue_->open_searches();
  ASSERT_EQ(open_ones.size(), 2u);
  EXPECT_EQ(open_ones[0].id, a);
  EXPECT_EQ(open_ones[0].identity_digest, "da");
  EXPECT_EQ(open_ones[1].key, "n=1");
  queue_->close_search(a);
  open_ones = queue_->open_searches();
  ASSERT_EQ(open_ones.size(), 1u);
  EXPECT_EQ(open_ones[0].id, b);
}

TEST_F(PgWorkQueue, FourTakersLeaseEachOfTwoHundredItemsOnce) {
  const std::int64_t s = open();
  const auto all = points(200);
  queue_->add_items(s, all);
  queue_->add_items(s, all);  // queued twice: still one item each
  EXPECT_EQ(queue_->unfinished_items(s), 200u);
  std::mutex mutex;
  std::map<std::size_t, int> taken;
  std::vector<std::thread> takers;
  for (int t = 0; t < 4; ++t) {
    takers.emplace_back([&, t] {
      std::string why;
      auto own = store_->open_work_queue(why);  // a connection each, as separate workers
      const std::string holder = "w" + std::to_string(t);
      const std::int64_t searches[] = {s};
      while (auto item = own->take_item(searches, holder, milliseconds(30000), 3)) {
        EXPECT_EQ(item->config, "x=" + std::to_string(item->index));
        EXPECT_EQ(item->attempts, 1);
        WorkResult r;
        r.value = static_cast<double>(item->index) * 1e-3;
        r.worker = holder;
        EXPECT_TRUE(own->finish_item(item->id, holder, r));
        std::lock_guard lock(mutex);
        ++taken[item->index];
      }
    });
  }
  for (auto& t : takers) t.join();
  ASSERT_EQ(taken.size(), 200u);
  for (const auto& [index, n] : taken) EXPECT_EQ(n, 1) << index;
  const auto finished = queue_->collect_finished(s, "coordinator");
  ASSERT_EQ(finished.size(), 200u);
  std::set<std::size_t> indices;
  for (const FinishedItem& f : finished) {
    indices.insert(f.item.index);
    EXPECT_DOUBLE_EQ(f.result.value, static_cast<double>(f.item.index) * 1e-3);
    EXPECT_EQ(f.result.status, Status::ok);
  }
  EXPECT_EQ(indices.size(), 200u);
  EXPECT_TRUE(queue_->collect_finished(s, "coordinator").empty());  // collected once
  EXPECT_EQ(queue_->unfinished_items(s), 0u);
}

TEST_F(PgWorkQueue, AnExpiredLeaseIsTakenAgainAndItsHolderCannotFinish) {
  const std::int64_t s = open();
  queue_->add_items(s, points(1));
  const std::int64_t searches[] = {s};
  const auto first = queue_->take_item(searches, "dies", milliseconds(200), 3);
  ASSERT_TRUE(first);
  EXPECT_FALSE(queue_->take_item(searches, "other", milliseconds(200), 3));  // live lease
  EXPECT_TRUE(queue_->renew_item(first->id, "dies", milliseconds(200)));
  EXPECT_FALSE(queue_->renew_item(first->id, "other", milliseconds(200)));
  std::this_thread::sleep_for(milliseconds(300));
  const auto second = queue_->take_item(searches, "other", milliseconds(30000), 3);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->id, first->id);
  EXPECT_EQ(second->attempts, 2);
  EXPECT_FALSE(queue_->renew_item(first->id, "dies", milliseconds(200)));
  WorkResult late;
  late.worker = "dies";
  EXPECT_FALSE(queue_->finish_item(first->id, "dies", late));  // it passed to another
  WorkResult r;
  r.status = Status::validation_failed;
  r.value = std::numeric_limits<double>::infinity();
  r.evidence = R"({"name":"x"})";
  r.worker = "other";
  EXPECT_TRUE(queue_->finish_item(second->id, "other", r));
  const auto finished = queue_->collect_finished(s, "coordinator");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].result.status, Status::validation_failed);
  EXPECT_EQ(finished[0].result.worker, "other");
  EXPECT_EQ(finished[0].result.evidence, R"({"name":"x"})");
  EXPECT_TRUE(std::isinf(finished[0].result.value));
}

TEST_F(PgWorkQueue, AnItemWhoseWorkersKeepDyingIsRecordedAsCrashed) {
  const std::int64_t s = open();
  queue_->add_items(s, points(1));
  const std::int64_t searches[] = {s};
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const auto item =
        queue_->take_item(searches, "w" + std::to_string(attempt), milliseconds(50), 2);
    ASSERT_TRUE(item) << attempt;
    EXPECT_EQ(item->attempts, attempt);
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_FALSE(queue_->take_item(searches, "w3", milliseconds(50), 2));  // two leases: no more
  EXPECT_EQ(queue_->abandon_items(s, 2), 1u);
  const auto finished = queue_->collect_finished(s, "coordinator");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].result.status, Status::crashed);
  EXPECT_EQ(finished[0].result.worker, "w2");
  EXPECT_EQ(finished[0].item.attempts, 2);
}

TEST_F(PgWorkQueue, ClosingASearchDropsItsItems) {
  const std::int64_t s = open();
  queue_->add_items(s, points(3));
  const std::int64_t searches[] = {s};
  const auto item = queue_->take_item(searches, "w", milliseconds(30000), 3);
  ASSERT_TRUE(item);
  queue_->close_search(s);
  EXPECT_FALSE(queue_->take_item(searches, "w", milliseconds(30000), 3));
  EXPECT_FALSE(queue_->finish_item(item->id, "w", WorkResult{}));
  EXPECT_EQ(queue_->unfinished_items(s), 0u);
}

TEST(WorkQueueOfAFileStore, IsRefusedWithWhy) {
  testing::StoreUnderTest file("sqlite");
  const auto store = open_store(file.spec(), [](std::string_view m) { ADD_FAILURE() << m; });
  ASSERT_TRUE(store);
  std::string why;
  EXPECT_EQ(store->open_work_queue(why), nullptr);
  EXPECT_NE(why.find("need a server store (postgresql://"), std::string::npos) << why;
}

}  // namespace
}  // namespace tunekit
