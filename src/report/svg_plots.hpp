// The report's figures as inline SVG (private to src/report): each takes plain data and
// returns one <svg> element. Callers say in words when there is nothing to draw; these draw
// what they are given.
#pragma once

#include <string>
#include <vector>

namespace tunekit::detail {

// One candidate's samples (seconds per launch).
struct StripRow {
  std::string name;
  std::vector<double> samples;
  bool is_default = false;
  bool winner = false;
};
// A row per candidate: every sample as a dot (jittered deterministically), a box from the
// 25th to the 75th percentile with the median, whiskers to the extremes; the default and the
// winner are marked in their labels and colours. Log scale when readings span > 20x.
std::string strip_box_plot(const std::vector<StripRow>& rows);

struct CurvePoint {
  double x = 0;
  double y = 0;
};
// The best score so far as a step line over `x` (evaluations, or seconds when `x_seconds`).
std::string best_so_far_plot(const std::vector<CurvePoint>& points, const std::string& x_label,
                             bool x_seconds);

struct ScatterPoint {
  std::string name;
  double x = 0;
  double y = 0;
  bool is_default = false;
  bool winner = false;
};
// Seconds against seconds (log-log when they span > 20x), each point titled with its name.
std::string scatter_plot(const std::vector<ScatterPoint>& points, const std::string& x_label,
                         const std::string& y_label);

struct BarRow {
  std::string label;
  double value = 0;
};
// Horizontal bars with their counts.
std::string bar_chart(const std::vector<BarRow>& rows, const std::string& value_label);

}  // namespace tunekit::detail
