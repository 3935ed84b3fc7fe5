// Shared searches across processes (docs/fleet.md "Shared searches", issue #18 item 3): a
// `tunekit replay --share` coordinator and `tunekit worker --dataset` processes on one
// PostgreSQL schema (TUNEKIT_TEST_POSTGRES_URL). They share this machine's identity (the
// recorded device), so every worker joins; the recording's build and validation times are
// slept at a pace, so an item takes real time and the work spreads.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/child_process.hpp"
#include "store/pg_schema.hpp"
#include "unit/store/store_under_test.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kDataset = std::string(TUNEKIT_DATASETS_DIR) + "/dedispersion_milo/A100.json.gz";

struct Process {
  pid_t pid = -1;
  std::string out, err;
};

Process spawn(const std::vector<std::string>& args, const fs::path& dir, const std::string& name) {
  Process p;
  p.out = (dir / (name + ".out")).string();
  p.err = (dir / (name + ".err")).string();
  std::vector<std::string> all{TUNEKIT_CLI_PATH};
  all.insert(all.end(), args.begin(), args.end());
  p.pid = tunekit::testing::spawn_child(all, p.out, p.err);
  return p;
}

int wait_for(const Process& p) {
  return tunekit::testing::exit_code_of(p.pid);
}

std::string text_of(const std::string& file) {
  return tunekit::testing::file_text(file);
}

class SharedSearchProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!store_.problem().empty()) FAIL() << store_.problem();
    dir_ = fs::temp_directory_path() / tunekit::testing::unique_name("tunekit-shared-");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs until stop() (SIGTERM: it finishes the item in hand, then writes its summary); the
  // idle exit is only a safety net should a test fail before stopping it.
  Process worker(const std::string& name, const std::string& pace, const std::string& ttl) {
    return spawn({"worker", "--store", store_.spec(), "--dataset", kDataset, "--pace", pace,
                  "--item-ttl", ttl, "--poll", "0.1s", "--idle-exit", "120s", "--json"},
                 dir_, name);
  }
  static int stop(const Process& p) {
    kill(p.pid, SIGTERM);
    return wait_for(p);
  }
  // Until the worker says it takes work (its device and the store are open), at most 20 s.
  static bool ready(const Process& p) {
    for (int i = 0; i < 400; ++i) {
      if (text_of(p.err).find("worker taking work from") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // The replay's first run: {best_config, winner, evaluations}.
  static Json first_run(const Process& p) {
    const Json j = Json::parse(text_of(p.out), nullptr, false);
    if (j.is_discarded() || !j.contains("runs")) return Json::object();
    return j["runs"][0];
  }
  // "N points evaluated by workers, M of the queued ones here" from the coordinator's log.
  static std::pair<int, int> shared_counts(const Process& p) {
    const std::string err = text_of(p.err);
    std::smatch m;
    if (!std::regex_search(err, m,
                           std::regex(R"((\d+) points evaluated by workers, (\d+) of the queued)")))
      return {-1, -1};
    return {std::stoi(m[1]), std::stoi(m[2])};
  }

  tunekit::testing::StoreUnderTest store_{"postgresql"};
  fs::path dir_;
};

const std::vector<std::string> kSearch = {"replay",         "--dataset", kDataset, "--strategy",
                                          "random",         "--seed",    "7",      "--json",
                                          "--budget-evals", "24"};

// Issue #18: a shared search with 3 workers finds the same best as one process, each item
// evaluated once.
TEST_F(SharedSearchProcesses, ThreeWorkersFindTheSameBestAsOneProcessEachItemOnce) {
  const Process alone = spawn(kSearch, dir_, "alone");
  ASSERT_EQ(wait_for(alone), 0) << text_of(alone.err);
  std::vector<Process> workers;
  for (int w = 0; w < 3; ++w) workers.push_back(worker("w" + std::to_string(w), "0.2", "30s"));
  for (const Process& w : workers) ASSERT_TRUE(ready(w)) << text_of(w.err);
  std::vector<std::string> shared_args = kSearch;
  for (const char* a : {"--share", "--pace", "0.2", "--store"}) shared_args.push_back(a);
  shared_args.push_back(store_.spec());
  const Process shared = spawn(shared_args, dir_, "shared");
  ASSERT_EQ(wait_for(shared), 0) << text_of(shared.err);
  int worker_items = 0;
  for (const Process& w : workers) {
    ASSERT_EQ(stop(w), 0) << text_of(w.err);
    const Json summary = Json::parse(text_of(w.out));
    EXPECT_EQ(summary["items_lost"], 0) << summary;
    EXPECT_EQ(summary["searches_joined"], 1) << summary;
    worker_items += summary["items"].get<int>();
  }
  const Json a = first_run(alone), s = first_run(shared);
  EXPECT_EQ(s["best_config"], a["best_config"]);
  EXPECT_EQ(s["winner"], a["winner"]);
  EXPECT_EQ(s["evaluations"], 25);
  EXPECT_EQ(a["evaluations"], 25);
  const auto [by_workers, here] = shared_counts(shared);
  EXPECT_EQ(by_workers, worker_items) << text_of(shared.err);
  EXPECT_EQ(by_workers + here, 24) << "each queued point evaluated once";
  EXPECT_GT(worker_items, 0) << "the workers took part";
}

// Issue #18: killing a worker mid-item loses nothing: its item is leased again once its lease
// lapses, and the search ends with every point evaluated.
TEST_F(SharedSearchProcesses, AWorkerKilledMidItemLosesNothing) {
  std::vector<std::string> search = kSearch;
  search.back() = "16";
  const Process alone = spawn(search, dir_, "alone");
  ASSERT_EQ(wait_for(alone), 0) << text_of(alone.err);
  const Process doomed = worker("doomed", "1", "1s");
  const Process survivor = worker("survivor", "1", "1s");
  ASSERT_TRUE(ready(doomed)) << text_of(doomed.err);
  ASSERT_TRUE(ready(survivor)) << text_of(survivor.err);
  for (const char* a : {"--share", "--pace", "1", "--store"}) search.push_back(a);
  search.push_back(store_.spec());
  const Process shared = spawn(search, dir_, "shared");
  // Killed while it holds an item (its holder name carries its pid).
  auto admin = tunekit::testing::postgres_admin();
  const std::string holding = "SELECT count(*) FROM " +
                              tunekit::detail::pg_table(store_.schema(), "work_items") +
                              " WHERE state = 'leased' AND holder LIKE $1";
  bool held = false;
  for (int i = 0; i < 400 && !held; ++i) {
    try {
      held = admin->run(holding, {"%:" + std::to_string(doomed.pid) + ":%"}).row(0).integer(0) > 0;
    } catch (const tunekit::detail::PgError&) {  // the tables are made by the first opener
    }
    if (!held) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(held) << "the worker never held an item: " << text_of(doomed.err);
  kill(doomed.pid, SIGKILL);
  EXPECT_EQ(wait_for(doomed), 128 + SIGKILL);
  ASSERT_EQ(wait_for(shared), 0) << text_of(shared.err);
  ASSERT_EQ(stop(survivor), 0) << text_of(survivor.err);
  const Json a = first_run(alone), s = first_run(shared);
  EXPECT_EQ(s["evaluations"], 17) << text_of(shared.err);
  EXPECT_EQ(s["best_config"], a["best_config"]);
  const auto [by_workers, here] = shared_counts(shared);
  EXPECT_EQ(by_workers + here, 16) << text_of(shared.err);
}

// Issue #18: the queue gone mid-search (here its table dropped under it, so every statement is
// refused): the coordinator warns, naming the store, and evaluates the rest itself.
TEST_F(SharedSearchProcesses, AQueueLostMidSearchLeavesTheRestToTheCoordinator) {
  std::vector<std::string> search = kSearch;
  search.back() = "10";
  const Process alone = spawn(search, dir_, "alone");
  ASSERT_EQ(wait_for(alone), 0) << text_of(alone.err);
  for (const char* a : {"--share", "--pace", "0.5", "--store"}) search.push_back(a);
  search.push_back(store_.spec());
  const Process shared = spawn(search, dir_, "shared");
  auto admin = tunekit::testing::postgres_admin();
  const std::string items = tunekit::detail::pg_table(store_.schema(), "work_items");
  bool queued = false;
  for (int i = 0; i < 400 && !queued; ++i) {
    try {
      queued = admin->run("SELECT count(*) FROM " + items + " WHERE state IN ('done', 'collected')")
                   .row(0)
                   .integer(0) > 0;
    } catch (const tunekit::detail::PgError&) {  // the tables are made by the first opener
    }
    if (!queued) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(queued) << text_of(shared.err);
  admin->run("DROP TABLE " + items);
  ASSERT_EQ(wait_for(shared), 0) << text_of(shared.err);
  const std::string err = text_of(shared.err);
  EXPECT_NE(err.find("goes on in this process alone"), std::string::npos) << err;
  EXPECT_NE(err.find("tunekit_schema=" + store_.schema()), std::string::npos) << err;
  const Json a = first_run(alone), s = first_run(shared);
  EXPECT_EQ(s["evaluations"], 11) << err;
  EXPECT_EQ(s["best_config"], a["best_config"]);
}

// The live path: a CPU worker joins a `tune --share` of a built-in op (its identity computed as
// the coordinator's), and the report accounts for every proposed point; a worker of another
// numerics policy (another identity) is refused and leaves it alone. A 256³ shape keeps the
// tune going long enough for the workers' 50 ms poll: a 48³ one ended before they saw it once
// the worker process was no longer forked again for every batch.
TEST_F(SharedSearchProcesses, ACpuWorkerJoinsALiveTuneOfTheSameIdentityOnly) {
  const Process same = spawn(
      {"worker", "--store", store_.spec(), "--poll", "0.05s", "--idle-exit", "120s", "--json"},
      dir_, "same");
  const Process other = spawn({"worker", "--store", store_.spec(), "--poll", "0.05s", "--idle-exit",
                               "120s", "--numerics", "bitwise", "--json"},
                              dir_, "other");
  ASSERT_TRUE(ready(same)) << text_of(same.err);
  ASSERT_TRUE(ready(other)) << text_of(other.err);
  const Process tune =
      spawn({"tune", "sgemm", "--shape", "m=256,n=256,k=256", "--store", store_.spec(), "--share",
             "--strategy", "random", "--seed", "5", "--budget-evals", "12", "--json"},
            dir_, "tune");
  ASSERT_EQ(wait_for(tune), 0) << text_of(tune.err);
  ASSERT_EQ(stop(same), 0) << text_of(same.err);
  ASSERT_EQ(stop(other), 0) << text_of(other.err);
  const Json joined = Json::parse(text_of(same.out));
  EXPECT_EQ(joined["searches_joined"], 1) << joined << text_of(same.err);
  EXPECT_EQ(joined["items_lost"], 0);
  const Json refused = Json::parse(text_of(other.out));
  EXPECT_EQ(refused["searches_joined"], 0) << refused;
  EXPECT_EQ(refused["searches_refused"], 1) << refused;
  EXPECT_EQ(refused["items"], 0);
  const auto [by_workers, here] = shared_counts(tune);
  // A point a worker took but could not judge (a window refused on a loaded machine) is
  // measured here again and counted here.
  EXPECT_GE(joined["items"].get<int>(), 1) << joined;
  EXPECT_LE(by_workers, joined["items"].get<int>()) << text_of(tune.err);
  EXPECT_EQ(by_workers + here, 12) << text_of(tune.err);
  const Json report = Json::parse(text_of(tune.out));
  EXPECT_EQ(report["source"], "searched") << report.dump();
  for (const Json& c : report["candidates"]) EXPECT_NE(c["status"], "skipped") << c.dump();
}

// A file store has no queue: the worker says what it needs.
TEST_F(SharedSearchProcesses, AWorkerOnAFileStoreSaysItNeedsAServer) {
  const Process w = spawn({"worker", "--store", "sqlite:" + (dir_ / "c.db").string(), "--dataset",
                           kDataset, "--idle-exit", "1s"},
                          dir_, "file");
  EXPECT_EQ(wait_for(w), 2) << text_of(w.err);
  EXPECT_NE(text_of(w.err).find("shared searches need a server store"), std::string::npos)
      << text_of(w.err);
}

}  // namespace
