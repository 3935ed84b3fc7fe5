// Tuning leases across processes (src/tuner/tuning_lease_hold.cpp, docs/fleet.md "Leases"):
// worker processes (lease_worker.cpp) on one SQLite file or one PostgreSQL schema, with no
// device lock, so only the leases keep two processes from tuning one key.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/child_process.hpp"
#include "tunekit/store.hpp"
#include "unit/store/store_under_test.hpp"

namespace {

namespace fs = std::filesystem;

struct LeaseWorker {
  pid_t pid = -1;
  std::string out;  // its stdout file
  std::string err;  // its stderr file
};

// `holder`: the name its leases carry (LEASE_WORKER_HOLDER); empty: its own, of this host.
LeaseWorker spawn_worker(const std::vector<std::string>& args, const fs::path& dir, int n,
                         const std::string& holder = "") {
  LeaseWorker w;
  w.out = (dir / ("w" + std::to_string(n) + ".out")).string();
  w.err = (dir / ("w" + std::to_string(n) + ".err")).string();
  std::vector<std::string> all{TUNEKIT_LEASE_WORKER};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<std::string> env;
  if (!holder.empty()) env.push_back("LEASE_WORKER_HOLDER=" + holder);
  w.pid = tunekit::testing::spawn_child(all, w.out, w.err, env);
  return w;
}

int exit_code_of(pid_t pid) {
  return tunekit::testing::exit_code_of(pid);
}

std::string worker_output(const std::string& file) {
  return tunekit::testing::file_text(file);
}

// "<n> <source>" lines of a worker.
std::vector<std::pair<int, std::string>> answers_of(const LeaseWorker& w) {
  std::vector<std::pair<int, std::string>> out;
  std::istringstream in(worker_output(w.out));
  int n = 0;
  std::string source;
  while (in >> n >> source) out.emplace_back(n, source);
  return out;
}

std::string sqlite_integrity(const std::string& spec) {
  if (spec.rfind("sqlite:", 0) != 0) return "ok";  // the server checks its own
  sqlite3* db = nullptr;
  std::string result;
  if (sqlite3_open_v2(spec.substr(7).c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK)
    sqlite3_exec(
        db, "PRAGMA integrity_check",
        [](void* out, int, char** values, char**) {
          *static_cast<std::string*>(out) += values[0] ? values[0] : "";
          return 0;
        },
        &result, nullptr);
  sqlite3_close(db);
  return result;
}

class LeaseProcesses : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!store_.problem().empty()) FAIL() << store_.problem();
    dir_ = fs::temp_directory_path() / tunekit::testing::unique_name("tunekit-lease-");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<tunekit::Store> open() {
    return tunekit::open_store(store_.spec(), [](std::string_view m) { ADD_FAILURE() << m; });
  }

  tunekit::testing::StoreUnderTest store_{GetParam()};
  fs::path dir_;
};

// Issue #18: 8 processes x 200 selects over 20 keys: each key tuned exactly once, none lost.
TEST_P(LeaseProcesses, EightProcessesTuneEachOfTwentyKeysExactlyOnce) {
  std::vector<LeaseWorker> workers;
  for (int p = 0; p < 8; ++p)
    workers.push_back(spawn_worker(
        {store_.spec(), "20", "200", std::to_string(100 + p), "30", "0", "0"}, dir_, p));
  std::map<int, int> searched;
  std::map<int, int> asked;
  for (const LeaseWorker& w : workers) {
    ASSERT_GT(w.pid, 0);
    ASSERT_EQ(exit_code_of(w.pid), 0) << worker_output(w.err);
    const auto answers = answers_of(w);
    ASSERT_EQ(answers.size(), 200u) << worker_output(w.err);
    for (const auto& [n, source] : answers) {
      ++asked[n];
      if (source == "searched") ++searched[n];
    }
  }
  ASSERT_EQ(asked.size(), 20u);
  for (int n = 1; n <= 20; ++n) EXPECT_EQ(searched[n], 1) << "key n=" << n;
  auto store = open();
  ASSERT_TRUE(store);
  const auto entries = store->list("fake");
  EXPECT_EQ(entries.size(), 20u);
  for (const auto& e : entries) EXPECT_EQ(e.winner, "fast") << e.key;
  EXPECT_TRUE(store->leases().empty()) << "a lease survived its search";
  EXPECT_EQ(sqlite_integrity(store_.spec()), "ok");
}

// Issue #18: SIGKILL the holder 20 times at seeded random moments (before it holds the lease,
// while it searches, after it stored); a process that waits for the key tunes it to completion
// (after the lease expired, or at once for a dead holder of this host) or serves the stored
// choice; no lease outlives its TTL, the store is whole.
TEST_P(LeaseProcesses, AHolderKilledAtRandomMomentsLeavesTheKeyToTheNextProcess) {
  constexpr int kRounds = 20;
  constexpr int kHoldMs = 300;
  std::mt19937 rng(2026);  // the seed of the kill moments
  std::vector<LeaseWorker> holders;
  std::vector<std::string> ready;
  for (int r = 0; r < kRounds; ++r) {
    ready.push_back((dir_ / ("ready" + std::to_string(r))).string());
    // Half the holders are named as another host's: once killed, their leases can only
    // expire; a holder of this host is seen gone and its lease taken over at once.
    const std::string holder = r % 4 < 2 ? "elsewhere-" + std::to_string(r) + ":1:1:1" : "";
    holders.push_back(
        spawn_worker({store_.spec(), "=" + std::to_string(r + 1), "1", std::to_string(r), "0.4",
                      "0", std::to_string(kHoldMs), ready.back()},
                     dir_, r, holder));
  }
  // Even rounds: killed at a random moment after spawning (it may not hold the lease yet);
  // odd rounds: at a random moment after its search began (during it, or after the store).
  std::vector<int> after_ms;
  for (int r = 0; r < kRounds; ++r)
    after_ms.push_back(std::uniform_int_distribution<int>(0, r % 2 ? kHoldMs + 100 : 150)(rng));
  const auto start = std::chrono::steady_clock::now();
  std::vector<bool> killed(kRounds, false);
  std::vector<std::optional<std::chrono::steady_clock::time_point>> began(kRounds);
  for (int done = 0; done < kRounds;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const auto now = std::chrono::steady_clock::now();
    for (int r = 0; r < kRounds; ++r) {
      if (killed[r]) continue;
      if (r % 2 && !began[r] && fs::exists(ready[r])) began[r] = now;
      const auto from = r % 2 ? began[r] : std::optional(start);
      if (from && now - *from >= std::chrono::milliseconds(after_ms[r])) {
        ::kill(holders[r].pid, SIGKILL);
        killed[r] = true;
        ++done;
      } else if (now - start > std::chrono::seconds(60)) {
        FAIL() << "holder " << r << " never began its search: " << worker_output(holders[r].err);
      }
    }
  }
  int killed_holding = 0;
  for (int r = 0; r < kRounds; ++r) {
    const int code = exit_code_of(holders[r].pid);
    EXPECT_TRUE(code == 128 + SIGKILL || code == 0) << code;
    if (code == 128 + SIGKILL && fs::exists(ready[r])) ++killed_holding;
  }
  // The test means something only if holders died holding their lease.
  EXPECT_GE(killed_holding, 5);
  std::vector<LeaseWorker> next;
  for (int r = 0; r < kRounds; ++r)
    next.push_back(spawn_worker(
        {store_.spec(), "=" + std::to_string(r + 1), "1", std::to_string(r), "0.4", "20", "0"},
        dir_, 100 + r));
  auto store = open();
  ASSERT_TRUE(store);
  for (int r = 0; r < kRounds; ++r) {
    ASSERT_EQ(exit_code_of(next[r].pid), 0) << worker_output(next[r].err);
    const auto answers = answers_of(next[r]);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_TRUE(answers[0].second == "searched" || answers[0].second == "cache_replay")
        << "round " << r << ": " << answers[0].second << "; " << worker_output(next[r].err);
  }
  const auto entries = store->list("fake");
  EXPECT_EQ(entries.size(), static_cast<std::size_t>(kRounds));
  // A holder killed after storing, before releasing, leaves its lease to expire (the next
  // process served the stored choice and never needed it): once a TTL has passed, no lease
  // keeps anyone off any key.
  const std::int64_t all_done = store->now_ms();
  for (const tunekit::TuningLease& l : store->leases())
    EXPECT_LE(l.expires_at_ms, all_done + 400) << l.holder << " holds " << l.key << " on";
  while (store->now_ms() <= all_done + 400)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (const auto& e : entries) {
    tunekit::TuningLease wanted;
    wanted.identity_digest = e.identity_digest;
    wanted.holder = "the-test";
    EXPECT_EQ(store->take_lease(wanted, std::chrono::milliseconds(1000)).state,
              tunekit::LeaseState::held)
        << e.key;
  }
  EXPECT_EQ(sqlite_integrity(store_.spec()), "ok");
}

INSTANTIATE_TEST_SUITE_P(Stores, LeaseProcesses, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });

}  // namespace
