#include "report/svg_plots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "report/svg_writer.hpp"
#include "tunekit/stats.hpp"

namespace tunekit::detail {
namespace {

constexpr double kWidth = 760;
constexpr std::size_t kLabelChars = 30;

// The finite values' range (stored evidence is outside data: an inf or NaN sample is not
// plotted into the scale); {0, 1} when there is none.
std::pair<double, double> extent(const std::vector<double>& values) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return {0, 1};
  return {lo, hi};
}

// The marker a row's label carries and the class its shapes are drawn in.
std::string row_label(const StripRow& row) {
  std::string label = clip_text(row.name, kLabelChars);
  if (row.winner) label = "\xE2\x98\x85 " + label;  // ★
  if (row.is_default) label += " (default)";
  return label;
}

const char* row_class(bool is_default, bool winner) {
  return winner ? "win" : is_default ? "def" : "cand";
}

// A fixed vertical offset in [-1, 1] per sample index: dots spread out, identically each run.
double jitter(std::size_t i) {
  return static_cast<double>(static_cast<int>((i * 7) % 11) - 5) / 5.0;
}

void draw_strip_row(Svg& svg, const Scale& x, const StripRow& row, double y, double half) {
  std::vector<double> s;  // the finite samples (a stored inf or NaN is not a reading)
  for (double v : row.samples)
    if (std::isfinite(v)) s.push_back(v);
  const std::size_t readings = s.size();
  if (s.empty()) s.push_back(x.lo);
  const char* cls = row_class(row.is_default, row.winner);
  svg.text(x.from - 8, y + 4, row_label(row), std::string("name ") + cls, Anchor::end, row.name);
  const double q1 = stats::quantile(s, 0.25), q3 = stats::quantile(s, 0.75);
  const double med = stats::median(s);
  const auto [lo, hi] = extent(s);
  svg.line(x.at(lo), y, x.at(q1), y, "whisker");
  svg.line(x.at(q3), y, x.at(hi), y, "whisker");
  svg.rect(x.at(q1), y - half, x.at(q3) - x.at(q1), 2 * half, std::string("box ") + cls,
           fmt::format("{}: median {}, 25-75 % {} .. {}, {} samples", row.name, seconds_tick(med),
                       seconds_tick(q1), seconds_tick(q3), readings));
  for (std::size_t i = 0; i < s.size(); ++i)
    svg.circle(x.at(s[i]), y + jitter(i) * half * 0.8, 1.6, std::string("pt ") + cls);
  svg.line(x.at(med), y - half - 1, x.at(med), y + half + 1, "median");
}

}  // namespace

std::string strip_box_plot(const std::vector<StripRow>& rows) {
  constexpr double kRow = 20, kTop = 10, kLeft = 250, kRight = 20, kBottom = 44;
  std::vector<double> all;
  for (const StripRow& r : rows) all.insert(all.end(), r.samples.begin(), r.samples.end());
  const auto [lo, hi] = extent(all);
  const double height = kTop + kRow * static_cast<double>(rows.size()) + kBottom;
  Svg svg(kWidth, height, "samples of every measured candidate");
  const Scale x = Scale::fit(lo, hi, kLeft, kWidth - kRight, /*allow_log=*/true);
  const double axis_y = height - kBottom + 6;
  svg.x_axis(x, axis_y, kTop, x.log ? "seconds per launch (log scale)" : "seconds per launch",
             seconds_tick);
  for (std::size_t i = 0; i < rows.size(); ++i)
    draw_strip_row(svg, x, rows[i], kTop + kRow * (static_cast<double>(i) + 0.5), kRow * 0.3);
  return std::move(svg).finish();
}

std::string best_so_far_plot(const std::vector<CurvePoint>& points, const std::string& x_label,
                             bool x_seconds) {
  constexpr double kHeight = 240, kLeft = 80, kTop = 12, kBottom = 44, kWidthHere = 370;
  std::vector<double> xs, ys;
  for (const CurvePoint& p : points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  const auto [x_lo, x_hi] = extent(xs);
  const auto [y_lo, y_hi] = extent(ys);
  Svg svg(kWidthHere, kHeight, "best score so far against " + x_label);
  const Scale x = Scale::fit(std::min(0.0, x_lo), x_hi, kLeft, kWidthHere - 12, false);
  const Scale y = Scale::fit(y_lo, y_hi, kHeight - kBottom, kTop, false);
  svg.x_axis(x, kHeight - kBottom, kTop, x_label, x_seconds ? seconds_tick : count_tick);
  svg.y_axis(y, kLeft, kWidthHere - 12, "best so far", seconds_tick);
  std::vector<std::pair<double, double>> steps;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i > 0) steps.emplace_back(x.at(points[i].x), y.at(points[i - 1].y));
    steps.emplace_back(x.at(points[i].x), y.at(points[i].y));
  }
  svg.polyline(steps, "curve");
  for (const CurvePoint& p : points)
    svg.circle(
        x.at(p.x), y.at(p.y), 2.5, "pt win",
        fmt::format("{}: {}", x_seconds ? seconds_tick(p.x) : count_tick(p.x), seconds_tick(p.y)));
  return std::move(svg).finish();
}

std::string scatter_plot(const std::vector<ScatterPoint>& points, const std::string& x_label,
                         const std::string& y_label) {
  constexpr double kHeight = 320, kLeft = 80, kTop = 12, kBottom = 44, kWidthHere = 480;
  std::vector<double> xs, ys;
  for (const ScatterPoint& p : points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  const auto [x_lo, x_hi] = extent(xs);
  const auto [y_lo, y_hi] = extent(ys);
  Svg svg(kWidthHere, kHeight, y_label + " against " + x_label);
  const Scale x = Scale::fit(x_lo, x_hi, kLeft, kWidthHere - 12, true);
  const Scale y = Scale::fit(y_lo, y_hi, kHeight - kBottom, kTop, true);
  svg.x_axis(x, kHeight - kBottom, kTop, x.log ? x_label + " (log)" : x_label, seconds_tick);
  svg.y_axis(y, kLeft, kWidthHere - 12, y.log ? y_label + " (log)" : y_label, seconds_tick);
  for (const ScatterPoint& p : points)
    svg.circle(
        x.at(p.x), y.at(p.y), p.winner || p.is_default ? 4.5 : 3,
        std::string("pt ") + row_class(p.is_default, p.winner),
        fmt::format("{}: model {}, measured {}", p.name, seconds_tick(p.x), seconds_tick(p.y)));
  return std::move(svg).finish();
}

std::string bar_chart(const std::vector<BarRow>& rows, const std::string& value_label) {
  constexpr double kRow = 22, kLeft = 170, kTop = 8, kBottom = 40, kWidthHere = 520;
  const double height = kTop + kRow * static_cast<double>(rows.size()) + kBottom;
  double most = 0;
  for (const BarRow& r : rows) most = std::max(most, r.value);
  Svg svg(kWidthHere, height, value_label);
  const Scale x = Scale::fit(0, most, kLeft, kWidthHere - 40, false);
  svg.x_axis(x, height - kBottom + 4, kTop, value_label, count_tick);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    svg.text(kLeft - 8, y + kRow * 0.65, clip_text(rows[i].label, 24), "name", Anchor::end);
    svg.rect(kLeft, y + 3, x.at(rows[i].value) - kLeft, kRow - 6, "bar",
             fmt::format("{}: {}", rows[i].label, count_tick(rows[i].value)));
    svg.text(x.at(rows[i].value) + 4, y + kRow * 0.65, count_tick(rows[i].value), "tick");
  }
  return std::move(svg).finish();
}

}  // namespace tunekit::detail
