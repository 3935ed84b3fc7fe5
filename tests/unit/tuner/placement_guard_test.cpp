// Waiting out a far placement of the CPUs during a search (src/tuner/placement_guard.cpp,
// MeasureOptions::placement): a reading over far_ratio times the search's lowest waits, the
// CPUs idle, until they are near again or the search's wait is spent; then no more waiting.
#include "tuner/placement_guard.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using detail::PlacementGuard;
using fakes::FakeDevice;
using fakes::make_fake_op;

// A simulated clock the guard's idling advances.
struct SimulatedTime {
  double t = 0;
  PlacementWait options(double wait_seconds = 1.0) {
    PlacementWait o;
    o.wait_seconds = wait_seconds;
    o.check_seconds = 0.02;
    o.poll_seconds = 0.002;
    o.sleep = [this](double s) { t += s; };
    return o;
  }
  std::function<double()> now() {
    return [this] { return t; };
  }
};

TEST(PlacementGuard, AFarReadingWaitsUntilTheCpusAreNearAgain) {
  SimulatedTime time;
  FakeDevice dev;
  // Far from 50 ms to 80 ms of the search.
  dev.round_trip = [&] { return time.t >= 0.050 && time.t < 0.080 ? 340.0 : 60.0; };
  PlacementGuard guard(dev, time.options(), time.now());
  guard.start(60);
  time.t = 0.050;
  const double waited = guard.before_window();
  EXPECT_NEAR(waited, 0.030, 0.0025);  // polls of 2 ms until 80 ms
  EXPECT_GE(time.t, 0.080);
  CpuPlacement p;
  guard.report(p);
  EXPECT_EQ(p.waits, 1);
  EXPECT_DOUBLE_EQ(p.waited_seconds, waited);
  EXPECT_EQ(p.ran_far, 0);
  EXPECT_DOUBLE_EQ(p.lowest_ns, 60);
  p.before_ns = 60, p.after_ns = 60;
  EXPECT_FALSE(p.mixed()) << "every window ran near";
}

TEST(PlacementGuard, ReadsAtMostOnceEveryCheckInterval) {
  SimulatedTime time;
  FakeDevice dev;
  dev.round_trip = [] { return 60.0; };
  PlacementGuard guard(dev, time.options(), time.now());
  guard.start(60);
  for (int i = 0; i < 10; ++i) {
    time.t += 0.005;  // a window of 5 ms
    guard.before_window();
  }
  EXPECT_EQ(dev.round_trip_reads, 2);  // at 20 and 40 ms (from the start at 0), not at 50
}

TEST(PlacementGuard, AWaitThatEndsFarEndsTheWaitingForTheSearch) {
  SimulatedTime time;
  FakeDevice dev;
  dev.round_trip = [] { return 340.0; };  // a host that keeps them apart from now on
  PlacementGuard guard(dev, time.options(0.1), time.now());
  guard.start(60);
  time.t = 0.05;
  EXPECT_NEAR(guard.before_window(), 0.1, 1e-9);  // the search's whole wait, no more
  const int reads = dev.round_trip_reads;
  time.t += 1;
  EXPECT_EQ(guard.before_window(), 0);
  EXPECT_EQ(dev.round_trip_reads, reads) << "no reading once the search gave up";
  CpuPlacement p{.before_ns = 60, .after_ns = 340};
  guard.report(p);
  EXPECT_EQ(p.waits, 1);
  EXPECT_EQ(p.ran_far, 1);
  EXPECT_TRUE(p.mixed());
}

// What a budget leaves caps the wait: the budget's time is not waited away.
TEST(PlacementGuard, WaitsNoLongerThanTheBudgetLeaves) {
  SimulatedTime time;
  FakeDevice dev;
  dev.round_trip = [] { return 340.0; };
  PlacementGuard guard(dev, time.options(2.0), time.now());
  guard.start(60);
  time.t = 0.05;
  EXPECT_NEAR(guard.before_window(0.01), 0.01, 1e-9);
  CpuPlacement p;
  guard.report(p);
  EXPECT_EQ(p.ran_far, 1);
}

TEST(PlacementGuard, ASearchThatBeganFarIsMixedOnceTheCpusAreSeenNear) {
  SimulatedTime time;
  FakeDevice dev;
  dev.round_trip = [] { return 55.0; };
  PlacementGuard guard(dev, time.options(), time.now());
  guard.start(330);  // the reading before the search: far, not known to be yet
  time.t = 0.03;
  EXPECT_EQ(guard.before_window(), 0);
  CpuPlacement p{.before_ns = 330, .after_ns = 55};
  guard.report(p);
  EXPECT_DOUBLE_EQ(p.lowest_ns, 55);
  EXPECT_EQ(p.waits, 0);
  EXPECT_EQ(p.ran_far, 1) << "the windows before the near reading ran far";
  EXPECT_TRUE(p.mixed());
  CpuPlacement same{.before_ns = 330, .after_ns = 320, .lowest_ns = 320};
  EXPECT_FALSE(same.mixed()) << "far throughout: one placement";
  CpuPlacement after{.before_ns = 60, .after_ns = 330, .lowest_ns = 60};
  EXPECT_TRUE(after.mixed()) << "far after the search: the last windows may have been";
}

// A reading not far against the lowest so far lets windows run; a later, lower one can show
// it was far after all: those windows ran in another placement.
TEST(PlacementGuard, WindowsLetRunAtAReadingALaterOneShowsFarRanFar) {
  SimulatedTime time;
  FakeDevice dev;
  std::vector<double> trips{190, 50};
  dev.round_trip = [&trips] {
    const double ns = trips.front();
    if (trips.size() > 1) trips.erase(trips.begin());
    return ns;
  };
  PlacementGuard guard(dev, time.options(), time.now());
  guard.start(100);
  for (int i = 0; i < 2; ++i) {
    time.t += 0.03;
    EXPECT_EQ(guard.before_window(), 0);  // 190 is under twice 100; 50 is near
  }
  CpuPlacement p{.before_ns = 100, .after_ns = 50};
  guard.report(p);
  EXPECT_EQ(p.waits, 0);
  EXPECT_EQ(p.ran_far, 1);
  EXPECT_TRUE(p.mixed());
}

// Once the search's wait is spent, a far reading is no wait of zero seconds: the windows run
// far from then on.
TEST(PlacementGuard, AFarReadingAfterTheWaitIsSpentCountsNoWait) {
  SimulatedTime time;
  FakeDevice dev;
  dev.round_trip = [&] {
    const bool far = (time.t >= 0.050 && time.t < 0.080) || time.t >= 0.200;
    return far ? 340.0 : 60.0;
  };
  PlacementGuard guard(dev, time.options(0.03), time.now());
  guard.start(60);
  time.t = 0.050;
  EXPECT_NEAR(guard.before_window(), 0.030, 1e-9);  // the whole wait, ending near
  time.t = 0.200;
  EXPECT_EQ(guard.before_window(), 0);
  CpuPlacement p;
  guard.report(p);
  EXPECT_EQ(p.waits, 1);
  EXPECT_EQ(p.ran_far, 1);
}

// A reading after the search that the device could not take: no "moved" verdict either way.
TEST(PlacementGuard, NoVerdictWithoutBothReadings) {
  CpuPlacement p{.before_ns = 60, .after_ns = 0, .lowest_ns = 60, .ran_far = 1};
  EXPECT_FALSE(p.measured());
  EXPECT_FALSE(p.mixed());
}

TEST(PlacementGuard, DoesNothingWhereTheDeviceCannotTellOrTheWaitIsOff) {
  SimulatedTime time;
  FakeDevice dev;
  dev.round_trip = [] { return 340.0; };
  {
    PlacementGuard guard(dev, time.options(), time.now());
    guard.start(0);  // the device could not tell before the search
    time.t += 1;
    EXPECT_EQ(guard.before_window(), 0);
  }
  {
    PlacementGuard guard(dev, time.options(0), time.now());
    guard.start(60);
    time.t += 1;
    EXPECT_EQ(guard.before_window(), 0);
  }
  EXPECT_EQ(dev.round_trip_reads, 0);
  // A reading that cannot tell (NaN: every burst waited for a CPU) waits for nothing.
  dev.round_trip = [] { return std::numeric_limits<double>::quiet_NaN(); };
  PlacementGuard guard(dev, time.options(), time.now());
  guard.start(60);
  time.t += 1;
  EXPECT_EQ(guard.before_window(), 0);
  CpuPlacement p;
  guard.report(p);
  EXPECT_EQ(p.waits, 0);
}

// Through the tuner: a candidate whose two threads share data reads 2.5x slower while the
// host runs the CPUs apart (from 3 ms to 60 ms of the search's clock, which every launch
// advances by 1 ms). Waiting it out, every window is taken near and that candidate wins;
// without the wait its windows in the far spell make the other one win.
TEST(PlacementGuard, TheTunerTakesItsWindowsWithTheCpusNear) {
  auto tune = [](double wait_seconds, TuneReport& r) {
    SimulatedTime time;
    FakeDevice dev;
    auto far = [&time] { return time.t >= 0.003 && time.t < 0.060; };
    dev.round_trip = [far] { return far() ? 340.0 : 60.0; };
    auto op = make_fake_op(dev, {"def", "shared", "apart"}, "def");
    dev.behaviour["def"].seconds = 5e-3;
    dev.behaviour["apart"].seconds = 1.3e-3;
    for (const char* name : {"def", "shared", "apart"})
      dev.behaviour[name].hook = [&dev, &time, far] {
        dev.behaviour["shared"].seconds = far() ? 2.5e-3 : 1e-3;
        time.t += 1e-3;
      };
    TunerOptions o;
    o.measure.now = time.now();
    o.measure.placement = time.options(wait_seconds);
    o.measure.placement.check_seconds = 0;  // before every window
    Tuner(dev, o).select(*op, Key{{"n", 4}}, &r);
    return r.winner_name;
  };
  TuneReport waited;
  EXPECT_EQ(tune(1.0, waited), "shared");
  EXPECT_GE(waited.cpu_placement.waits, 1);
  EXPECT_EQ(waited.cpu_placement.ran_far, 0);
  EXPECT_GT(waited.cpu_placement.waited_seconds, 0);
  EXPECT_GE(waited.seconds_settling, waited.cpu_placement.waited_seconds);
  EXPECT_FALSE(waited.cpu_placement.mixed());
  TuneReport unguarded;
  EXPECT_EQ(tune(0, unguarded), "apart");
  EXPECT_EQ(unguarded.cpu_placement.waits, 0);
}

}  // namespace
}  // namespace tunekit
