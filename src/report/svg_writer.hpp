// A small hand-written SVG writer for the HTML report (private to src/report): scales, axes
// with ticks, shapes and escaped text. Output is deterministic: every coordinate is written
// with one decimal, so a fixed report always renders to the same bytes (golden tests).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit::detail {

// Text for HTML and SVG, element content and attribute values alike: & < > " ' escaped,
// control characters (but tab and newline) shown as U+FFFD. Every outside string (candidate
// names, keys, messages) goes through it.
std::string html_escape(std::string_view text);

// At most `width` code points of `text`, "…" as the last one when something was cut.
std::string clip_text(std::string_view text, std::size_t width);

// A coordinate: one decimal, "-0.0" written as "0.0".
std::string svg_number(double value);

// Data values to pixels along one axis, linear or logarithmic (for readings that span
// orders of magnitude).
struct Scale {
  double lo = 0, hi = 1;      // the data domain (lo < hi; lo > 0 when log)
  double from = 0, to = 100;  // the pixels lo and hi map to
  bool log = false;
  double at(double value) const;
  // Round values inside [lo, hi] to label: 1-2-5 steps (decades when log).
  std::vector<double> ticks() const;
  // A scale over [lo, hi] padded by 5 % (a single value is widened); log when `allow_log`,
  // lo is positive and hi / lo exceeds 20.
  static Scale fit(double lo, double hi, double from, double to, bool allow_log);
};

using TickFormat = std::string (*)(double);
std::string seconds_tick(double seconds);  // "1.23 ms"
std::string count_tick(double count);      // "12", "2.5"

enum class Anchor { start, middle, end };

class Svg {
 public:
  // `label` names the figure for screen readers (aria-label).
  Svg(double width, double height, std::string_view label);
  void line(double x1, double y1, double x2, double y2, std::string_view css_class);
  void rect(double x, double y, double w, double h, std::string_view css_class,
            std::string_view title = {});
  void circle(double cx, double cy, double r, std::string_view css_class,
              std::string_view title = {});
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view css_class);
  void text(double x, double y, std::string_view text, std::string_view css_class,
            Anchor anchor = Anchor::start, std::string_view title = {});
  // An axis along the bottom at pixel row `y` (ticks, labels, grid lines up to `grid_top`).
  void x_axis(const Scale& scale, double y, double grid_top, std::string_view label,
              TickFormat format);
  // An axis along the left at pixel column `x` (grid lines across to `grid_right`).
  void y_axis(const Scale& scale, double x, double grid_right, std::string_view label,
              TickFormat format);
  std::string finish() &&;

 private:
  std::string body_;
  double width_, height_;
};

}  // namespace tunekit::detail
