// End-to-end tests of `tunekit cache ...` and `tunekit tune --save-artifact / --store`: runs
// the built binary, each test with its own temporary cache and artifact directories.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"
#include "tunekit/store.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Result = tunekit::testing::CliResult;
using tunekit::testing::contains;
using tunekit::testing::parse_json;

using tunekit::testing::kTuneSum;  // a tiny key: a search takes a fraction of a second

struct Env {
  std::string cache = "cache";          // TUNEKIT_CACHE_DIR, under the test's directory
  std::string artifacts = "artifacts";  // TUNEKIT_ARTIFACT_DIR; empty: unset
  std::string extra;                    // more NAME=value words
};

std::string read_file(const fs::path& path) {
  return tunekit::testing::read_text(path);
}
void write_file(const fs::path& path, const std::string& text) {
  tunekit::testing::write_text(path, text);
}

std::vector<fs::path> json_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  return files;
}

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/tunekit_cache_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    root_ = dir_template;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  fs::path path(const std::string& name) const { return root_ / name; }

  // Runs `tunekit <args>` with TUNEKIT_MODE unset and the test's own cache and artifact
  // directories, so nothing of the user's or of another test leaks in.
  Result tunekit(const std::string& args, const Env& env = {}) {
    std::string extra = env.extra;
    if (!env.artifacts.empty())
      extra = "TUNEKIT_ARTIFACT_DIR='" + path(env.artifacts).string() + "' " + extra;
    return tunekit::testing::run_cli(args, path(env.cache), root_, extra);
  }

  // Tunes the small sum key into `cache` and returns the report.
  json tune_sum(const Env& env = {}, const std::string& more = "") {
    const Result run = tunekit(std::string(kTuneSum) + " " + more, env);
    EXPECT_EQ(run.status, 0) << run.err;
    return parse_json(run);
  }

  fs::path root_;
};

TEST_F(CacheCli, SecondTuneReplaysAndTheEntryCanBeListedShownAndRemoved) {
  const json first = tune_sum();
  EXPECT_EQ(first.at("source"), "searched");
  const json second = tune_sum();
  EXPECT_EQ(second.at("source"), "cache_replay");
  EXPECT_EQ(second.at("winner"), first.at("winner"));
  const std::string key = first.at("key").get<std::string>();
  const std::string winner = first.at("winner").get<std::string>();

  const Result ls = tunekit("cache ls --json");
  ASSERT_EQ(ls.status, 0) << ls.err;
  const json entries = parse_json(ls);
  ASSERT_TRUE(entries.is_array());
  ASSERT_EQ(entries.size(), 1u) << ls.out;
  const json& entry = entries[0];
  EXPECT_EQ(entry.at("op"), "sum");
  EXPECT_EQ(entry.at("key"), key);
  EXPECT_EQ(entry.at("winner"), winner);
  EXPECT_EQ(entry.at("key_digest"), first.at("key_digest"));
  // The JSON columns are embedded as JSON, not as strings.
  EXPECT_TRUE(entry.at("device").is_object()) << entry.dump(2);
  EXPECT_FALSE(entry.at("device").at("product").get<std::string>().empty());
  EXPECT_TRUE(entry.at("toolchain").is_object());
  EXPECT_TRUE(entry.at("environment").is_object());
  // The evidence: how the search ran (strategy, seed, budget) and every candidate it touched.
  ASSERT_TRUE(entry.at("evidence").is_object()) << entry.dump(2);
  EXPECT_TRUE(entry.at("evidence").at("candidates").is_array());
  EXPECT_EQ(entry.at("evidence").at("candidates").size(), first.at("candidates").size());
  EXPECT_EQ(entry.at("evidence").at("search").at("strategy"), "auto");
  EXPECT_EQ(entry.at("evidence").at("search").at("seed"), first.at("search").at("seed"));
  for (const char* field : {"numerics_policy", "candidates", "winner_config", "measured",
                            "budget_cut", "created_at", "tunekit_version"}) {
    EXPECT_TRUE(entry.contains(field)) << field;
  }
  const std::string digest = entry.at("identity_digest").get<std::string>();
  ASSERT_EQ(digest.size(), 32u);

  const Result text = tunekit("cache ls");
  ASSERT_EQ(text.status, 0) << text.err;
  for (const std::string& part : {std::string("sum"), key, winner, digest.substr(0, 12)})
    EXPECT_TRUE(contains(text.out, part)) << part << " missing from\n" << text.out;

  const Result show = tunekit("cache show " + digest.substr(0, 8));
  ASSERT_EQ(show.status, 0) << show.err;
  for (const std::string& part :
       {winner, digest, key, entry.at("device").at("product").get<std::string>(),
        std::string("median"), std::string("samples")}) {
    EXPECT_TRUE(contains(show.out, part)) << part << " missing from\n" << show.out;
  }
  // Every candidate of the evidence is in the table.
  for (const json& c : first.at("candidates"))
    EXPECT_TRUE(contains(show.out, c.at("name").get<std::string>())) << show.out;

  const Result show_json = tunekit("cache show --json " + digest);
  ASSERT_EQ(show_json.status, 0) << show_json.err;
  const json shown = parse_json(show_json);
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].at("identity_digest"), digest);

  // A key without its defaults finds the entry as the op parses it.
  EXPECT_EQ(tunekit("cache show n=1000").status, 0);

  const Result rm = tunekit("cache rm '" + key + "'");
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_TRUE(contains(rm.out, "removed 1")) << rm.out;
  const Result after = tunekit("cache ls");
  ASSERT_EQ(after.status, 0) << after.err;
  EXPECT_TRUE(contains(after.out, "empty")) << after.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --json")), json::array());
  EXPECT_EQ(tune_sum().at("source"), "searched");
}

TEST_F(CacheCli, RemovesByOpAndAll) {
  tune_sum();
  ASSERT_EQ(tunekit("tune sum --shape n=2000 -q").status, 0);
  ASSERT_EQ(parse_json(tunekit("cache ls --json")).size(), 2u);
  EXPECT_EQ(parse_json(tunekit("cache ls --json --op sgemm")).size(), 0u);
  const Result by_op = tunekit("cache rm sum");
  ASSERT_EQ(by_op.status, 0) << by_op.err;
  EXPECT_TRUE(contains(by_op.out, "removed 2")) << by_op.out;

  tune_sum();
  const Result all = tunekit("cache rm --all");
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_TRUE(contains(all.out, "removed 1")) << all.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 0u);
  EXPECT_NE(tunekit("cache rm").status, 0);
  EXPECT_NE(tunekit("cache rm sum --all").status, 0);
}

TEST_F(CacheCli, NoMatchIsAnError) {
  tune_sum();
  const Result show = tunekit("cache show deadbeef");
  EXPECT_NE(show.status, 0);
  EXPECT_TRUE(show.out.empty()) << show.out;
  EXPECT_TRUE(contains(show.err, "deadbeef")) << show.err;
  const Result rm = tunekit("cache rm nothing");
  EXPECT_NE(rm.status, 0);
  EXPECT_TRUE(contains(rm.err, "nothing")) << rm.err;
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 1u)
      << "rm of no match removed something";
  // Against a store that does not exist yet, too.
  EXPECT_NE(tunekit("cache show deadbeef", {.cache = "none_yet"}).status, 0);
  EXPECT_NE(tunekit("cache rm nothing", {.cache = "none_yet"}).status, 0);
}

TEST_F(CacheCli, SaveArtifactWritesOneFileThatAFreshCacheReplays) {
  // Without -q: the path is a note (info), which -q hides with the progress.
  const Result saved = tunekit("tune sum --shape n=1000 --json --save-artifact --artifact-dir '" +
                               path("saved").string() + "'");
  ASSERT_EQ(saved.status, 0) << saved.err;
  EXPECT_EQ(parse_json(saved).at("source"), "searched");
  const std::vector<fs::path> files = json_files(path("saved"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(files[0].filename().string(), std::regex("sum-[0-9a-f]{32}\\.json")))
      << files[0];
  EXPECT_TRUE(contains(saved.err, files[0].string())) << "the path is not printed:\n" << saved.err;
  const json artifact = json::parse(read_file(files[0]));
  EXPECT_EQ(artifact.at("format"), "tunekit-artifact");
  EXPECT_EQ(artifact.at("candidate"), parse_json(saved).at("winner"));
  EXPECT_FALSE(artifact.at("evidence").empty());

  const Result replay = tunekit(kTuneSum, {.cache = "fresh", .artifacts = "saved"});
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(parse_json(replay).at("source"), "artifact_replay") << replay.out;

  // A cache replay is a measured winner too: its artifact carries the stored evidence.
  const Result again = tunekit(std::string(kTuneSum) + " --save-artifact", {.artifacts = "again"});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(parse_json(again).at("source"), "cache_replay");
  const std::vector<fs::path> again_files = json_files(path("again"));
  ASSERT_EQ(again_files.size(), 1u);
  EXPECT_EQ(again_files[0].filename(), files[0].filename());
  EXPECT_FALSE(json::parse(read_file(again_files[0])).at("evidence").empty());
}

TEST_F(CacheCli, SaveArtifactNeedsADirectory) {
  const Result run = tunekit(std::string(kTuneSum) + " --save-artifact", {.artifacts = ""});
  EXPECT_NE(run.status, 0);
  EXPECT_TRUE(run.out.empty()) << "it measured before refusing:\n" << run.out;
  EXPECT_TRUE(contains(run.err, "--artifact-dir") && contains(run.err, "TUNEKIT_ARTIFACT_DIR"))
      << run.err;
}

TEST_F(CacheCli, SaveArtifactWritesNothingForAnUnmeasuredWinner) {
  const Result run = tunekit(std::string(kTuneSum) + " --mode off --save-artifact");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(json_files(path("artifacts")).empty());
  EXPECT_TRUE(contains(run.err, "no artifact")) << run.err;
}

TEST_F(CacheCli, ExportThenImportIntoAFreshCacheReplays) {
  const json tuned = tune_sum();
  const Result exported = tunekit("cache export --dir '" + path("exported").string() + "'");
  ASSERT_EQ(exported.status, 0) << exported.err;
  const std::vector<fs::path> files = json_files(path("exported"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(contains(exported.out, files[0].string())) << exported.out;

  const Result imported =
      tunekit("cache import '" + path("exported").string() + "'", {.cache = "imported"});
  ASSERT_EQ(imported.status, 0) << imported.err;
  EXPECT_TRUE(contains(imported.out, "imported 1")) << imported.out;

  const Result cached = tunekit(std::string(kTuneSum) + " --mode cached", {.cache = "imported"});
  ASSERT_EQ(cached.status, 0) << cached.err;
  EXPECT_EQ(parse_json(cached).at("source"), "cache_replay") << cached.out;
  EXPECT_EQ(parse_json(cached).at("winner"), tuned.at("winner"));
  // The imported entry has the identity `tune` stored, and keeps the evidence.
  const json original = parse_json(tunekit("cache ls --json"));
  const json copy = parse_json(tunekit("cache ls --json", {.cache = "imported"}));
  ASSERT_EQ(original.size(), 1u);
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].at("identity_digest"), original[0].at("identity_digest"));
  EXPECT_EQ(copy[0].at("evidence"), original[0].at("evidence"));
}

TEST_F(CacheCli, ImportSkipsMalformedAndForeignFilesWithAWarning) {
  ASSERT_EQ(tunekit(std::string(kTuneSum) + " --save-artifact").status, 0);
  const std::vector<fs::path> saved = json_files(path("artifacts"));
  ASSERT_EQ(saved.size(), 1u);
  fs::create_directories(path("mixed"));
  fs::copy_file(saved[0], path("mixed") / saved[0].filename());
  write_file(path("mixed") / "broken.json", "{\"format\": \"tunekit-artifact\", ");
  json foreign = json::parse(read_file(saved[0]));
  foreign["identity"]["device"]["product"] = "Some Other CPU 9000";
  write_file(path("mixed") / "other-device.json", foreign.dump(2));
  json unknown_op = json::parse(read_file(saved[0]));
  unknown_op["identity"]["name"] = "no_such_op";
  write_file(path("mixed") / "unknown-op.json", unknown_op.dump(2));

  const Result run = tunekit("cache import '" + path("mixed").string() + "'", {.cache = "fresh"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "imported 1")) << run.out;
  EXPECT_TRUE(contains(run.out, "skipped 3")) << run.out;
  EXPECT_TRUE(contains(run.err, "broken.json")) << run.err;
  EXPECT_TRUE(contains(run.err, "other-device.json")) << run.err;
  EXPECT_TRUE(contains(run.err, "Some Other CPU 9000")) << run.err;
  EXPECT_TRUE(contains(run.err, "unknown-op.json")) << run.err;
  EXPECT_TRUE(contains(run.err, "no_such_op")) << run.err;
  EXPECT_EQ(parse_json(tunekit("cache ls --json", {.cache = "fresh"})).size(), 1u);

  // Only bad files: nothing imported is a failure, still no crash.
  fs::remove(path("mixed") / saved[0].filename());
  const Result bad = tunekit("cache import '" + path("mixed").string() + "'", {.cache = "bad"});
  EXPECT_NE(bad.status, 0);
  EXPECT_LT(bad.status, 128) << "killed by a signal";
  EXPECT_TRUE(contains(bad.err, "broken.json")) << bad.err;
}

TEST_F(CacheCli, MissingAndUnusableStores) {
  // A store that does not exist yet is listed as empty and is not created by looking.
  const Result missing = tunekit("cache ls");
  ASSERT_EQ(missing.status, 0) << missing.err;
  EXPECT_TRUE(contains(missing.out, path("cache").string())) << missing.out;
  EXPECT_FALSE(fs::exists(path("cache") / "choices.db"));
  EXPECT_NE(tunekit("cache export --dir '" + path("out").string() + "'").status, 0);

  fs::create_directories(path("garbage"));
  write_file(path("garbage") / "choices.db", "this is not a database\n");
  for (const char* args :
       {"cache ls", "cache show abcdef", "cache rm sum", "cache export --dir x"}) {
    const Result run = tunekit(args, {.cache = "garbage"});
    EXPECT_NE(run.status, 0) << args;
    EXPECT_LT(run.status, 128) << args << ": killed by a signal";
    EXPECT_TRUE(contains(run.err, (path("garbage") / "choices.db").string())) << run.err;
  }
  EXPECT_EQ(read_file(path("garbage") / "choices.db"), "this is not a database\n");
  EXPECT_NE(tunekit("cache ls --store none").status, 0);
  EXPECT_NE(tunekit("cache ls --store bogus:thing").status, 0);
}

// Runs SQL on a store file from this process (another process to the CLI).
class Sql {
 public:
  explicit Sql(const fs::path& file) { EXPECT_EQ(sqlite3_open(file.c_str(), &db_), SQLITE_OK); }
  ~Sql() { sqlite3_close(db_); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;
  void operator()(const char* sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql, nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST_F(CacheCli, LsTellsEachStoreStateApartByMessageAndExitStatus) {
  tune_sum();
  ASSERT_EQ(tunekit("cache rm --all").status, 0);
  const fs::path file = path("cache") / "choices.db";
  const Result empty = tunekit("cache ls");
  EXPECT_EQ(empty.status, 0) << empty.err;
  EXPECT_TRUE(contains(empty.out, "is empty")) << empty.out;

  {
    Sql holder(file);  // keeps readers out until it goes
    holder("PRAGMA locking_mode=EXCLUSIVE");
    holder("BEGIN EXCLUSIVE");
    holder("INSERT OR REPLACE INTO tunekit_meta(name, value) VALUES('held', '1')");
    const auto start = std::chrono::steady_clock::now();
    const Result locked = tunekit("cache ls");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              10.0);
    EXPECT_EQ(locked.status, 5) << locked.err;
    EXPECT_TRUE(contains(locked.err, "locked by another process")) << locked.err;
    EXPECT_TRUE(contains(locked.err, file.string())) << locked.err;
    holder("ROLLBACK");
  }

  Sql("" + file.string())("UPDATE tunekit_meta SET value='99' WHERE name='schema_version'");
  const Result newer = tunekit("cache ls");
  EXPECT_EQ(newer.status, 8) << newer.err;
  EXPECT_TRUE(contains(newer.err, "newer tunekit")) << newer.err;
  Sql("" + file.string())("UPDATE tunekit_meta SET value='1' WHERE name='schema_version'");

  write_file(path("garbage.db"), "not a database at all\n");
  const Result corrupt = tunekit("cache ls --store 'sqlite:" + path("garbage.db").string() + "'");
  EXPECT_EQ(corrupt.status, 7) << corrupt.err;
  EXPECT_TRUE(contains(corrupt.err, "not a tunekit store or corrupt")) << corrupt.err;

  ASSERT_EQ(::mkfifo(path("fifo.db").c_str(), 0600), 0);
  const Result fifo = tunekit("cache ls --store 'sqlite:" + path("fifo.db").string() + "'");
  EXPECT_EQ(fifo.status, 9) << fifo.err;
  EXPECT_TRUE(contains(fifo.err, "a FIFO")) << fifo.err;

  // Unreadable: as root (who reads anything) the CLI runs as uid 65534 on root's 0600 file.
  std::string as;
  if (::geteuid() == 0) {
    fs::permissions(root_, fs::perms::owner_all | fs::perms::others_exec);
    fs::permissions(path("cache"), fs::perms::owner_all | fs::perms::others_exec);
    as = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  } else {
    fs::permissions(file, fs::perms::none);
  }
  const Result unreadable = tunekit("cache ls", {.extra = as});
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(unreadable.status, 6) << unreadable.err;
  EXPECT_TRUE(contains(unreadable.err, "not readable by you")) << unreadable.err;
  EXPECT_EQ(tunekit("cache ls").status, 0) << "the store was changed by looking";

  fs::permissions(path("cache"), fs::perms::all);  // 0777: anyone could plant a store there
  const Result untrusted = tunekit("cache ls");
  EXPECT_EQ(untrusted.status, 9) << untrusted.err;
  EXPECT_TRUE(contains(untrusted.err, "writable by others")) << untrusted.err;
  EXPECT_TRUE(contains(untrusted.err, "TUNEKIT_TRUST_STORE=1")) << untrusted.err;
  EXPECT_EQ(tunekit("cache ls", {.extra = "TUNEKIT_TRUST_STORE=1"}).status, 0);
  // tune says so too, and runs memory-only: it searches, and stores nothing there.
  const Result tuned = tunekit(kTuneSum);
  EXPECT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_TRUE(contains(tuned.err, "writable by others")) << tuned.err;
  fs::permissions(path("cache"), fs::perms::owner_all);
  EXPECT_TRUE(contains(tunekit("cache ls").out, "is empty"));
}

TEST_F(CacheCli, AReadOnlyStoreIsServedNotRetuned) {
  tune_sum();
  const fs::path file = path("cache") / "choices.db";
  ASSERT_FALSE(fs::exists(file.string() + "-wal"));
  const std::string before = read_file(file);
  // As root (who may write anything) the CLI runs as uid 65534 on root's store; else the
  // file and its directory lose their write permission.
  std::string as;
  const auto readable = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec;
  if (::geteuid() == 0) {
    fs::permissions(root_, readable);
    fs::permissions(path("cache"), readable);
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
    as = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  } else {
    fs::permissions(file, fs::perms::owner_read);
    fs::permissions(path("cache"), fs::perms::owner_read | fs::perms::owner_exec);
  }
  const Result served = tunekit(kTuneSum, {.extra = as});
  ASSERT_EQ(served.status, 0) << served.err;
  EXPECT_EQ(parse_json(served).at("source"), "cache_replay") << served.err;
  const Result fresh = tunekit("tune sum --shape n=3000 -q --json", {.extra = as});
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(parse_json(fresh).at("source"), "searched");
  EXPECT_TRUE(contains(fresh.err, "read-only")) << fresh.err;
  const Result listed = tunekit("cache ls", {.extra = as});
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_TRUE(contains(listed.out, "1 stored choice")) << listed.out;
  EXPECT_TRUE(contains(listed.out, "read-only")) << listed.out;
  const Result rm = tunekit("cache rm --all", {.extra = as});
  EXPECT_EQ(rm.status, 2) << rm.err;
  EXPECT_TRUE(contains(rm.err, "read-only")) << rm.err;
  fs::permissions(path("cache"), fs::perms::owner_all);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read_file(file), before) << "the read-only store was written";
}

TEST_F(CacheCli, StoredTextReachesTheTerminalEscaped) {
  {
    auto store = tunekit::open_store("sqlite:" + (path("cache") / "choices.db").string(), {});
    ASSERT_NE(store, nullptr);
    tunekit::CandidateReport x;
    x.name = "x";
    x.outcome.message = "\x1b[1A up";
    tunekit::SearchRecord search;
    search.strategy = "\x1b[31mred";
    search.seed = 7;
    tunekit::StoredChoice c = tunekit::make_stored_choice(
        tunekit::Identity{}, "win\x1b]0;pwned\x07", "mc=\x1b[2J64", {x}, false, search);
    c.identity_digest = "0123456789abcdef0123456789abcdef";
    c.op = "sum";
    c.key = "n=1\x1b[H";
    store->put(c);
  }
  for (const char* args : {"cache ls", "cache show 0123456789"}) {
    const Result run = tunekit(args);
    ASSERT_EQ(run.status, 0) << args << ": " << run.err;
    EXPECT_FALSE(contains(run.out, "\x1b")) << args << " printed a raw escape:\n" << run.out;
    EXPECT_TRUE(contains(run.out, "\\x1b")) << args << ":\n" << run.out;
  }
  // JSON keeps the text exact (escaped by JSON itself).
  EXPECT_EQ(parse_json(tunekit("cache ls --json"))[0].at("key"), "n=1\x1b[H");
}

TEST_F(CacheCli, ShowAndRmFindAnEntryByTheKeyAsTuneShapeTakesIt) {
  const std::string key = tune_sum().at("key").get<std::string>();
  for (const char* args : {"cache show --shape n=1000", "cache show --op sum --shape n=1000",
                           "cache show --json --shape n=1000"}) {
    const Result show = tunekit(args);
    ASSERT_EQ(show.status, 0) << args << ": " << show.err;
    EXPECT_TRUE(contains(show.out, key)) << args << ":\n" << show.out;
  }
  // A key that matches nothing names itself and says where to look.
  const Result none = tunekit("cache show --shape n=5000");
  EXPECT_NE(none.status, 0);
  EXPECT_TRUE(contains(none.err, "no stored choice has the key 'n=5000'")) << none.err;
  EXPECT_TRUE(contains(none.err, "cache ls")) << none.err;
  const Result other_op = tunekit("cache show --op softmax --shape n=1000");
  EXPECT_NE(other_op.status, 0);
  EXPECT_TRUE(contains(other_op.err, "no stored choice of softmax")) << other_op.err;
  EXPECT_NE(tunekit("cache show").status, 0);  // nothing named
  // A --shape is a key, never a digest: a digest prefix given as --shape finds nothing.
  const std::string digest =
      parse_json(tunekit("cache ls --json"))[0].at("identity_digest").get<std::string>();
  EXPECT_NE(tunekit("cache show --shape " + digest.substr(0, 8)).status, 0);

  const Result rm = tunekit("cache rm --op sum --shape n=1000");
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_TRUE(contains(rm.out, "removed 1")) << rm.out;
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 0u);
}

TEST_F(CacheCli, ShowNamesTheBucketABucketedEntryServes) {
  {
    auto store = tunekit::open_store("sqlite:" + (path("cache") / "choices.db").string(), {});
    ASSERT_NE(store, nullptr);
    tunekit::SearchRecord search;
    search.strategy = "auto";
    search.bucket = "n: 65..128 (pow2)";
    tunekit::StoredChoice c =
        tunekit::make_stored_choice(tunekit::Identity{}, "fast", "", {}, false, search);
    c.identity_digest = "00112233445566778899aabbccddeeff";
    c.op = "bucketed";
    c.key = "n=128";
    store->put(c);
  }
  const Result show = tunekit("cache show 0011223344");
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "bucket")) << show.out;
  EXPECT_TRUE(contains(show.out, "n: 65..128 (pow2)")) << show.out;
  const Result show_json = tunekit("cache show --json 0011223344");
  ASSERT_EQ(show_json.status, 0) << show_json.err;
  EXPECT_EQ(parse_json(show_json)[0].at("bucket"), "n: 65..128 (pow2)");
  // An exact key's entry names no bucket.
  tune_sum();
  const json listed = parse_json(tunekit("cache ls --json --op sum"));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].at("bucket"), "");
  EXPECT_FALSE(contains(tunekit("cache show n=1000").out, "bucket"));
}

TEST_F(CacheCli, TuneStoreOption) {
  EXPECT_EQ(tune_sum({}, "--store none").at("source"), "searched");
  EXPECT_EQ(tune_sum({}, "--store none").at("source"), "searched");
  EXPECT_FALSE(fs::exists(path("cache") / "choices.db")) << "--store none wrote the default file";

  const std::string other = "--store 'sqlite:" + path("elsewhere/other.db").string() + "'";
  EXPECT_EQ(tune_sum({}, other).at("source"), "searched");
  EXPECT_EQ(tune_sum({}, other).at("source"), "cache_replay");
  EXPECT_EQ(parse_json(tunekit("cache ls --json " + other)).size(), 1u);
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 0u);
}

TEST_F(CacheCli, Help) {
  const Result cache = tunekit("cache --help");
  EXPECT_EQ(cache.status, 0);
  for (const char* sub : {"ls", "show", "rm", "export", "import"})
    EXPECT_TRUE(contains(cache.out, sub)) << sub << " missing from\n" << cache.out;
  const Result ls = tunekit("cache ls --help");
  EXPECT_TRUE(contains(ls.out, "5 locked") && contains(ls.out, "8 written by a newer")) << ls.out;
  const Result tune = tunekit("tune --help");
  EXPECT_TRUE(contains(tune.out, "--save-artifact") && contains(tune.out, "--store")) << tune.out;
}

}  // namespace
