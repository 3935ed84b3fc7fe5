// tunekit tune --html FILE and tunekit report --out FILE end to end: the pages written, the
// store's decisions selected by op and key, and hostile output paths refused.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "fakes/test_envelope.hpp"
#include "integration/cli_runner.hpp"
#include "tunekit/cost_model.hpp"

namespace tunekit::testing {
namespace {

namespace fs = std::filesystem;

class HtmlCli : public ::testing::Test {
 protected:
  CliResult tunekit(const std::string& args) { return run_cli(args, dir_ / "cache", dir_.path()); }
  // One measured decision in the store (three candidates of sum).
  void tune_one(const std::string& extra = "") {
    const CliResult run = tunekit("tune sum --shape n=4096 --budget-evals 2 --quiet " + extra);
    ASSERT_EQ(run.status, 0) << run.err;
  }
  TempDir dir_;
};

TEST_F(HtmlCli, TuneWritesTheRunsPage) {
  const fs::path page = dir_ / "run.html";
  tune_one("--html '" + page.string() + "'");
  const std::string html = read_text(page);
  EXPECT_TRUE(contains(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(contains(html, "<h2>sum <span class=\"key\">n=4096"));
  EXPECT_TRUE(contains(html, "<svg"));
  EXPECT_TRUE(contains(html, "(default)"));
  EXPECT_TRUE(contains(html, "\xE2\x98\x85 "));  // the winner's star
  EXPECT_FALSE(contains(html, "no samples stored")) << "a searched run has samples";
}

TEST_F(HtmlCli, TuneReporterHtmlWritesThePageToStdout) {
  const CliResult run = tunekit("tune sum --shape n=4096 --budget-evals 1 --quiet --reporter html");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "<!DOCTYPE html>"));
  EXPECT_TRUE(contains(run.out, "</html>"));
}

TEST_F(HtmlCli, ReportWritesTheFleetAndEveryDecision) {
  tune_one();
  const CliResult other = tunekit("tune sum --shape n=512 --budget-evals 1 --quiet");
  ASSERT_EQ(other.status, 0) << other.err;
  const fs::path page = dir_ / "report.html";
  const CliResult run = tunekit("report --out '" + page.string() + "'");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.err, "(2 decisions)")) << run.err;
  const std::string html = read_text(page);
  EXPECT_TRUE(contains(html, "<h2>Fleet</h2>"));
  EXPECT_TRUE(contains(html, "href=\"#d1\""));
  EXPECT_TRUE(contains(html, "href=\"#d2\""));
  EXPECT_TRUE(contains(html, "n=4096"));
  EXPECT_TRUE(contains(html, "n=512"));
  // A fresh cache directory has no device profile: the model plot says what to run.
  EXPECT_TRUE(contains(html, "run &#39;tunekit calibrate&#39;")) << html;
}

TEST_F(HtmlCli, ReportWithAProfileDrawsModelScoreAgainstMeasured) {
  const CliResult tune = tunekit("tune sum --shape n=4096 --quiet");  // every candidate
  ASSERT_EQ(tune.status, 0) << tune.err;
  DeviceProfile profile;
  profile.envelope = test_envelope();
  const std::string path = write_profile((dir_ / "profile.json").string(), profile);
  const fs::path page = dir_ / "model.html";
  const CliResult run = tunekit("report --profile '" + path + "' --out '" + page.string() + "'");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string html = read_text(page);
  EXPECT_TRUE(contains(html, "Spearman rank correlation:")) << html;
  EXPECT_FALSE(contains(html, "no cost-model scores for this decision"));
}

TEST_F(HtmlCli, ReportSelectsByOpAndKey) {
  tune_one();
  const CliResult other = tunekit("tune sum --shape n=512 --budget-evals 1 --quiet");
  ASSERT_EQ(other.status, 0) << other.err;
  const fs::path page = dir_ / "one.html";
  const CliResult run = tunekit("report --op sum --key n=512 --out '" + page.string() + "'");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.err, "(1 decisions)")) << run.err;
  EXPECT_FALSE(contains(read_text(page), "n=4096"));
  const CliResult missing = tunekit("report --key n=77 --out '" + page.string() + "'");
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(contains(missing.err, "no stored decision has the key 'n=77'")) << missing.err;
}

TEST_F(HtmlCli, ReportWithoutAStoreSaysSo) {
  const CliResult run = tunekit("report --out '" + (dir_ / "r.html").string() + "'");
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(contains(run.err, "there is no store")) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "r.html"));
  const CliResult no_out = tunekit("report");
  EXPECT_NE(no_out.status, 0);
  EXPECT_TRUE(contains(no_out.err, "--out")) << no_out.err;
}

TEST_F(HtmlCli, HostileOutputPathsAreRefused) {
  tune_one();
  fs::create_directory(dir_ / "a_dir");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  write_text(dir_ / "target", "keep");
  fs::create_symlink(dir_ / "target", dir_ / "link");
  for (const char* name : {"a_dir", "fifo", "link"}) {
    const CliResult run = tunekit("report --out '" + (dir_ / name).string() + "'");
    EXPECT_EQ(run.status, 2) << name;
    EXPECT_TRUE(contains(run.err, "HTML report")) << name << ": " << run.err;
  }
  EXPECT_EQ(read_text(dir_ / "target"), "keep");
  const CliResult tune_link = tunekit("tune sum --shape n=4096 --mode cached --quiet --html '" +
                                      (dir_ / "link").string() + "'");
  EXPECT_EQ(tune_link.status, 2) << tune_link.err;
  EXPECT_EQ(read_text(dir_ / "target"), "keep");
}

TEST_F(HtmlCli, PendingHasNoPage) {
  const CliResult run = tunekit("tune --pending --html '" + (dir_ / "p.html").string() + "'");
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(contains(run.err, "--html writes one run's page")) << run.err;
}

}  // namespace
}  // namespace tunekit::testing
