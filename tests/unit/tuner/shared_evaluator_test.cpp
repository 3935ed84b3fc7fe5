// Tests for src/tuner/shared_evaluator.cpp: which worker results the coordinator takes as a
// verdict on their point (the rest it evaluates itself). The whole coordinator runs in
// tests/integration/shared_search_processes_test.cpp against a real server.
#include "tuner/shared_evaluator.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tunekit::detail {
namespace {

WorkResult result(Status status, double value) {
  WorkResult r;
  r.status = status;
  r.value = value;
  return r;
}

TEST(SharedEvaluator, AWorkersReadingCountsOnlyWhenPositiveAndFinite) {
  EXPECT_TRUE(SharedEvaluator::judged_there(result(Status::ok, 1e-3)));
  EXPECT_TRUE(SharedEvaluator::judged_there(result(Status::hopeless, 2e-3)));
  for (double bad : {0.0, -1e-3, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    EXPECT_FALSE(SharedEvaluator::judged_there(result(Status::ok, bad))) << bad;
    EXPECT_FALSE(SharedEvaluator::judged_there(result(Status::hopeless, bad))) << bad;
  }
}

TEST(SharedEvaluator, AFailureOfThePointIsAVerdictAFailureOfTheWorkerIsNot) {
  for (Status s : {Status::compile_failed, Status::launch_failed, Status::validation_failed,
                   Status::out_of_memory, Status::timed_out, Status::crashed, Status::rejected})
    EXPECT_TRUE(SharedEvaluator::judged_there(result(s, 0))) << to_string(s);
  for (Status s : {Status::stopped, Status::skipped, Status::device_lost, Status::refused})
    EXPECT_FALSE(SharedEvaluator::judged_there(result(s, 1e-3))) << to_string(s);
}

}  // namespace
}  // namespace tunekit::detail
