// End-to-end tests of the recorded misses and the entries that no longer serve: `tunekit
// cache ls --pending`, `tunekit tune --pending`, and stale entries and bans in `cache ls` and
// `cache show`. The store is filled through the library, as a serving process would fill it.
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Result = tunekit::testing::CliResult;
using tunekit::testing::contains;
using tunekit::testing::parse_json;

constexpr const char* kFast = "-q --budget-evals 2 --isolation in_process";

class PendingCli : public ::testing::Test {
 protected:
  fs::path store_file() const { return dir_ / "cache" / "choices.db"; }

  Result tunekit(const std::string& args) {
    return tunekit::testing::run_cli(args, dir_ / "cache", dir_.path());
  }

  std::unique_ptr<tunekit::Store> store() {
    auto s = tunekit::open_store("sqlite:" + store_file().string(), {});
    EXPECT_NE(s, nullptr);
    return s;
  }

  // The miss a process in mode cached records for the built-in sum at `shape` on this
  // machine (the identity as `tune` computes it: the CPU device, no tags).
  tunekit::PendingMiss record_sum_miss(const std::string& shape) {
    tunekit::cpu::CpuDevice device;
    tunekit::cpu::ThreadPool pool(0);
    auto op = tunekit::find_builtin_op("sum").make(pool);
    tunekit::TunerOptions options;
    options.persist.store = "sqlite:" + store_file().string();
    tunekit::Tuner tuner(device, options);
    tunekit::PendingMiss miss =
        tunekit::make_pending_miss(tuner.identity(*op, op->parse_shape(shape)));
    tuner.store()->record_miss(miss);
    return miss;
  }

  tunekit::testing::TempDir dir_;
};

TEST_F(PendingCli, RecordedMissesAreListedTunedOnceAndThenServed) {
  EXPECT_TRUE(contains(tunekit("cache ls --pending").out, "does not exist yet"));
  for (const char* shape : {"n=100", "n=200", "n=300"}) record_sum_miss(shape);
  record_sum_miss("n=100");  // a second miss of a key counts, it does not add a record

  const Result ls = tunekit("cache ls --pending");
  ASSERT_EQ(ls.status, 0) << ls.err;
  EXPECT_TRUE(contains(ls.out, "3 pending misses")) << ls.out;
  EXPECT_TRUE(contains(ls.out, "n=200,dtype=f32")) << ls.out;
  EXPECT_TRUE(contains(ls.out, tunekit::cpu::CpuDevice().identity().product)) << ls.out;
  const json listed = parse_json(tunekit("cache ls --pending --json"));
  ASSERT_EQ(listed.size(), 3u) << listed.dump(2);
  EXPECT_EQ(listed[0].at("key"), "n=100,dtype=f32");
  EXPECT_EQ(listed[0].at("count"), 2);
  EXPECT_TRUE(listed[0].at("device").is_object());
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 0u) << "nothing stored yet";

  // Without a budget: a budget-cut entry is not what a later unrestricted process serves.
  const Result tuned = tunekit("tune --pending -q --isolation in_process");
  ASSERT_EQ(tuned.status, 0) << tuned.out << tuned.err;
  EXPECT_TRUE(contains(tuned.out, "3 of 3 pending misses tuned")) << tuned.out;
  EXPECT_TRUE(contains(tunekit("cache ls --pending").out, "no pending misses"));
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 3u);
  for (const char* shape : {"n=100", "n=200", "n=300"}) {
    const json served =
        parse_json(tunekit(std::string("tune sum --mode cached -q --json --shape ") + shape));
    EXPECT_EQ(served.at("source"), "cache_replay") << shape << ": " << served.dump(2);
  }
}

// The issue's whole loop through the CLI: a process in mode cached misses three keys, they are
// listed, tuned offline, and a later cached process serves them.
TEST_F(PendingCli, MissesOfAModeCachedRunAreTunedLaterAndThenServed) {
  for (const char* shape : {"n=100", "n=200", "n=300"}) {
    const Result served = tunekit(std::string("tune sum --mode cached -q --json --shape ") + shape);
    ASSERT_EQ(served.status, 0) << served.err;
    EXPECT_NE(parse_json(served).at("source"), "cache_replay") << shape;
  }
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 3u);
  const Result tuned = tunekit("tune --pending -q --isolation in_process");
  ASSERT_EQ(tuned.status, 0) << tuned.out << tuned.err;
  EXPECT_TRUE(contains(tuned.out, "3 of 3 pending misses tuned")) << tuned.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 0u);
  for (const char* shape : {"n=100", "n=200", "n=300"}) {
    const json served =
        parse_json(tunekit(std::string("tune sum --mode cached -q --json --shape ") + shape));
    EXPECT_EQ(served.at("source"), "cache_replay") << shape << ": " << served.dump(2);
  }
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 0u) << "a hit records nothing";
}

TEST_F(PendingCli, AMissOfAnUnknownOpIsReportedKeptAndFailsTheRun) {
  record_sum_miss("n=100");
  tunekit::PendingMiss gone = record_sum_miss("n=200");
  store()->remove_pending(gone.identity_digest);
  gone.op = "retired_op";
  store()->record_miss(gone);

  const Result run = tunekit(std::string("tune --pending ") + kFast);
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "tuned  sum  n=100,dtype=f32")) << run.out;
  EXPECT_TRUE(contains(run.out, "; budget cut)")) << "2 of 7 candidates: " << run.out;
  EXPECT_TRUE(contains(run.out, "kept   retired_op  n=200,dtype=f32  unknown_op")) << run.out;
  EXPECT_TRUE(contains(run.out, "1 of 2 pending misses tuned; 1 kept")) << run.out;
  const json left = parse_json(tunekit("cache ls --pending --json"));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].at("op"), "retired_op");

  // --json: every record's status and why, the same exit status.
  const Result again = tunekit(std::string("tune --pending --json ") + kFast);
  EXPECT_EQ(again.status, 1);
  const json outcomes = parse_json(again);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].at("status"), "unknown_op");
  EXPECT_TRUE(contains(outcomes[0].at("why").get<std::string>(), "retired_op"));
}

TEST_F(PendingCli, OnlyTheNamedOpsMissesAreTunedAndFlagsThatMeanNothingAreRefused) {
  record_sum_miss("n=100");
  const Result other = tunekit(std::string("tune --pending softmax ") + kFast);
  EXPECT_EQ(other.status, 0) << other.err;
  EXPECT_TRUE(contains(other.out, "0 of 0 pending misses tuned")) << other.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 1u);

  const Result shape = tunekit("tune --pending --shape n=5");
  EXPECT_EQ(shape.status, 2);
  EXPECT_TRUE(contains(shape.err, "--pending tunes the keys recorded")) << shape.err;
  const Result no_op = tunekit("tune");
  EXPECT_EQ(no_op.status, 2);
  EXPECT_TRUE(contains(no_op.err, "--pending")) << no_op.err;
}

TEST_F(PendingCli, AStaleEntryAndItsBansAreShownAndMarked) {
  const Result tuned = tunekit(std::string("tune sum --shape n=1000 --json ") + kFast);
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  const auto entries = store()->list();
  ASSERT_EQ(entries.size(), 1u);
  const std::string digest = entries[0].identity_digest;
  store()->mark_stale(digest, "its winner fails validation: max error 0.5");
  store()->ban({digest, "sum", entries[0].key, "pairwise", "threw: launch failed", 1700000000});

  const Result show = tunekit("cache show " + digest);
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "stale: its winner fails validation: max error 0.5")) << show.out;
  EXPECT_TRUE(contains(show.out, "banned: pairwise \u2014 threw: launch failed")) << show.out;
  const json shown = parse_json(tunekit("cache show --json " + digest));
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].at("stale"), "its winner fails validation: max error 0.5");
  ASSERT_EQ(shown[0].at("bans").size(), 1u);
  EXPECT_EQ(shown[0].at("bans")[0].at("candidate"), "pairwise");

  const Result ls = tunekit("cache ls");
  EXPECT_TRUE(contains(ls.out, " (stale)")) << ls.out;
  EXPECT_TRUE(contains(ls.out, "1 stale")) << ls.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --json"))[0].at("stale"),
            "its winner fails validation: max error 0.5");

  // cache rm forgets the entry and its bans.
  ASSERT_EQ(tunekit("cache rm " + digest).status, 0);
  EXPECT_TRUE(store()->bans(digest).empty());
}

TEST_F(PendingCli, CacheRmRemovesPendingMissesNothingIsStoredFor) {
  record_sum_miss("n=100");
  tunekit::PendingMiss gone = record_sum_miss("n=200");
  record_sum_miss("n=300");
  store()->remove_pending(gone.identity_digest);
  gone.op = "retired_op";
  store()->record_miss(gone);

  const Result by_op = tunekit("cache rm retired_op");
  ASSERT_EQ(by_op.status, 0) << by_op.err;
  EXPECT_TRUE(contains(by_op.out, "removed 0 stored choices and 1 pending miss")) << by_op.out;
  const Result by_key = tunekit("cache rm n=100");  // defaults filled as the op parses it
  ASSERT_EQ(by_key.status, 0) << by_key.err;
  EXPECT_TRUE(contains(by_key.out, "1 pending miss")) << by_key.out;
  const json left = parse_json(tunekit("cache ls --pending --json"));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].at("key"), "n=300,dtype=f32");
  EXPECT_EQ(tunekit("cache rm no_such_thing").status, 2);
  ASSERT_EQ(tunekit("cache rm --all").status, 0);
  EXPECT_TRUE(contains(tunekit("cache ls --pending").out, "no pending misses"));
}

TEST_F(PendingCli, AMissOfAnotherDeviceIsLeftAndDoesNotFailTheRun) {
  tunekit::PendingMiss miss = record_sum_miss("n=100");
  store()->remove_pending(miss.identity_digest);
  miss.device = R"({"backend":"opencl","product":"Some GPU"})";
  store()->record_miss(miss);
  const Result run = tunekit(std::string("tune --pending ") + kFast);
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "other_device")) << run.out;
  EXPECT_TRUE(contains(run.out, "1 left for the device that recorded them")) << run.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 1u);
}

}  // namespace
