// The schedule seam (DESIGN §6): how timing windows are shared among the points a strategy
// proposed. Registered by name with an options string, like strategies ("racing:round=4").
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "tunekit/registry.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit::detail {

class SearchContext;

// Whether point `index` may start (its admission, or its next window) now, with `lead` seconds
// more to fit before the budget's line: the first windows of the points admitted before it.
using MayStart = std::function<bool(std::size_t index, double lead)>;

class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual std::string_view name() const = 0;
  // Validates and measures `points` (already through the compile pass) and returns what each
  // evaluated point gave: ok with its score, hopeless with its partial reading, or its
  // failure. Before starting a point — its admission (prepare, validation) and each of its
  // timing windows — it asks may_start(index); a point refused before its admission is
  // finished as `stopped` by the schedule and left out of the results. At most one
  // candidate's trial is prepared at a time.
  virtual std::vector<PointResult> run(std::span<const std::size_t> points, SearchContext& context,
                                       const MayStart& may_start) = 0;
};

using ScheduleRegistry = Registry<Schedule>;
// full, racing.
const ScheduleRegistry& builtin_schedules();

std::unique_ptr<Schedule> make_full_schedule(SpecOptions& options);
std::unique_ptr<Schedule> make_racing_schedule(SpecOptions& options);
// The final race (SearchContext::final_race): racing's rounds, at its default options, over
// points validated and measured already, their fresh readings replacing the search's.
std::unique_ptr<Schedule> make_final_race();

// The value a strategy learns from a finished candidate: its score when ok, its partial
// reading when cut as hopeless, +inf otherwise.
PointResult point_result(const SearchContext& context, std::size_t index);
// Finishes a point the budget did not let start.
void finish_not_started(SearchContext& context, std::size_t index);

}  // namespace tunekit::detail
