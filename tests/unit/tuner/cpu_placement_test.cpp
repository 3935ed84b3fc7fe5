// Where the host ran the device's CPUs around a search (src/tuner/search.cpp run_search reads
// Device::cross_cpu_round_trip before and after; src/tuner/answer_log.cpp warns when it moved).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/log.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using fakes::make_fake_op;
using json = nlohmann::json;

// The device's cross-CPU round trip is read before and after the search; a placement the host
// changed meanwhile is a warning (the readings of multi-threaded candidates compare two
// machines), one it kept is not.
TEST(CpuPlacement, TheReportSaysWhereTheHostRanTheCpusAndWarnsWhenItMovedThem) {
  auto tune = [](std::vector<double> trips, std::vector<std::string>& warnings) {
    FakeDevice dev;
    dev.behaviour["def"].seconds = 2e-3;
    dev.behaviour["fast"].seconds = 1e-3;
    dev.round_trips = std::move(trips);
    auto op = make_fake_op(dev, {"def", "fast"}, "def");
    TunerOptions o;
    // Read before and after only (placement_guard_test.cpp covers the readings during it).
    o.measure.placement.check_seconds = 3600;
    o.hooks.log = Log::warnings_to([&](std::string_view m) { warnings.emplace_back(m); });
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 8}}, &r);
    EXPECT_TRUE(dev.round_trips.empty()) << "read once before and once after";
    return r;
  };
  std::vector<std::string> warnings;
  const TuneReport moved = tune({60, 340}, warnings);
  EXPECT_DOUBLE_EQ(moved.cpu_placement.before_ns, 60);
  EXPECT_DOUBLE_EQ(moved.cpu_placement.after_ns, 340);
  EXPECT_TRUE(moved.cpu_placement.changed());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("moved this machine's CPUs during the search"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("60 ns before the search, 340 ns after"), std::string::npos)
      << warnings[0];

  warnings.clear();
  const TuneReport kept = tune({60, 75}, warnings);
  EXPECT_TRUE(kept.cpu_placement.measured());
  EXPECT_FALSE(kept.cpu_placement.changed());
  EXPECT_TRUE(warnings.empty());

  const TuneReport unknown = tune({}, warnings);  // a device that cannot tell
  EXPECT_FALSE(unknown.cpu_placement.measured());
  EXPECT_TRUE(warnings.empty());
}

// The placement is kept with the stored decision; `explain` says it (JSON and console).
TEST(CpuPlacement, ExplainSaysWhereTheStoredDecisionsSearchRanTheCpus) {
  testing::TempDir dir;
  FakeDevice dev;
  dev.behaviour["def"].seconds = 2e-3;
  dev.behaviour["fast"].seconds = 1e-3;
  dev.round_trips = {60, 340};
  auto op = make_fake_op(dev, {"def", "fast"}, "def");
  TunerOptions o;
  o.persist.store = "sqlite:" + (dir / "choices.db").string();
  Tuner tuner(dev, o);
  tuner.select(*op, Key{{"n", 8}});
  const ModelReport m = tuner.explain(*op, Key{{"n", 8}});
  ASSERT_TRUE(m.measured_cpu_placement);
  EXPECT_DOUBLE_EQ(m.measured_cpu_placement->before_ns, 60);
  EXPECT_DOUBLE_EQ(m.measured_cpu_placement->after_ns, 340);
  const json j = json::parse(to_json(m));
  EXPECT_TRUE(j.at("measured_cpu_placement").at("mixed").get<bool>());
  std::ostringstream console;
  write_console(m, console);
  EXPECT_NE(console.str().find("CPUs: cross-CPU round trip 60 ns before the search, 340 ns after"),
            std::string::npos)
      << console.str();
}

}  // namespace
}  // namespace tunekit
