#include "report/svg_writer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/console_reporter.hpp"  // format_seconds: the one seconds formatter

namespace tunekit::detail {
namespace {

bool is_continuation(unsigned char c) {
  return (c & 0xC0U) == 0x80U;
}

const char* anchor_name(Anchor anchor) {
  switch (anchor) {
    case Anchor::middle:
      return "middle";
    case Anchor::end:
      return "end";
    case Anchor::start:
      break;
  }
  return "start";
}

// The 1-2-5 step nearest above range / target.
double nice_step(double range, int target) {
  const double raw = range / target;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

std::string title_element(std::string_view title) {
  return title.empty() ? std::string() : fmt::format("<title>{}</title>", html_escape(title));
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((c < 0x20 && ch != '\t' && ch != '\n') || c == 0x7F)
          out += "\xEF\xBF\xBD";  // U+FFFD
        else
          out += ch;
    }
  }
  return out;
}

std::string clip_text(std::string_view text, std::size_t width) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation(static_cast<unsigned char>(text[i]))) continue;
    if (points == width - 1) {
      std::size_t rest = 0;
      for (std::size_t j = i; j < text.size(); ++j)
        rest += is_continuation(static_cast<unsigned char>(text[j])) ? 0 : 1;
      if (rest > 1) return std::string(text.substr(0, i)) + "\xE2\x80\xA6";  // …
      return std::string(text);
    }
    ++points;
  }
  return std::string(text);
}

std::string svg_number(double value) {
  std::string text = fmt::format("{:.1f}", value);
  return text == "-0.0" ? "0.0" : text;
}

double Scale::at(double value) const {
  double t = log ? (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                 : (value - lo) / (hi - lo);
  if (std::isnan(t)) t = 0;  // a NaN reading sits at the axis' start, never "nan" in the SVG
  return from + std::clamp(t, 0.0, 1.0) * (to - from);
}

std::vector<double> Scale::ticks() const {
  std::vector<double> out;
  if (log) {
    const int first = static_cast<int>(std::floor(std::log10(lo)));
    const int last = static_cast<int>(std::ceil(std::log10(hi)));
    const bool decades_only = last - first > 3;
    for (int e = first; e <= last; ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        if (decades_only && m != 1.0) continue;
        const double v = m * std::pow(10.0, e);
        if (v >= lo && v <= hi) out.push_back(v);
      }
    return out;
  }
  const double step = nice_step(hi - lo, 6);
  if (!(step > 0) || !std::isfinite(step)) return out;
  // By index, bounded: a step under the values' ULP would never advance `v += step`.
  const double first = std::ceil(lo / step) * step;
  for (int k = 0; k < 100; ++k) {
    const double v = first + k * step;
    if (v > hi + step * 1e-9) break;
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return out;
}

Scale Scale::fit(double lo, double hi, double from, double to, bool allow_log) {
  Scale s;
  s.from = from;
  s.to = to;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = hi = 0;
  // One value, none, or values a few ULPs apart: widen so the value sits mid-axis.
  if (!(hi - lo > 1e-9 * std::max(std::abs(lo), std::abs(hi)))) {
    const double half = lo != 0 ? std::abs(lo) * 0.1 : 1.0;
    lo -= half;
    hi += half;
  }
  s.log = allow_log && lo > 0 && hi / lo > 20;
  if (s.log) {
    s.lo = lo / 1.12;
    s.hi = hi * 1.12;
  } else {
    const double pad = (hi - lo) * 0.05;
    s.lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    s.hi = hi + pad;
  }
  return s;
}

std::string seconds_tick(double seconds) {
  return seconds == 0 ? "0" : format_seconds(seconds);
}

std::string count_tick(double count) {
  return fmt::format("{:g}", count);
}

Svg::Svg(double width, double height, std::string_view label) : width_(width), height_(height) {
  body_ = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" role=\"img\" aria-label=\"{2}\">\n",
      svg_number(width_), svg_number(height_), html_escape(label));
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view css_class) {
  body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"{}\"/>\n",
                       svg_number(x1), svg_number(y1), svg_number(x2), svg_number(y2), css_class);
}

void Svg::rect(double x, double y, double w, double h, std::string_view css_class,
               std::string_view title) {
  body_ +=
      fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{}\">{}</rect>\n",
                  svg_number(x), svg_number(y), svg_number(std::max(w, 0.0)),
                  svg_number(std::max(h, 0.0)), css_class, title_element(title));
}

void Svg::circle(double cx, double cy, double r, std::string_view css_class,
                 std::string_view title) {
  body_ +=
      fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" class=\"{}\">{}</circle>\n", svg_number(cx),
                  svg_number(cy), svg_number(r), css_class, title_element(title));
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points,
                   std::string_view css_class) {
  std::string list;
  for (const auto& [x, y] : points) {
    if (!list.empty()) list += ' ';
    list += svg_number(x) + "," + svg_number(y);
  }
  body_ += fmt::format("<polyline points=\"{}\" class=\"{}\"/>\n", list, css_class);
}

void Svg::text(double x, double y, std::string_view text, std::string_view css_class, Anchor anchor,
               std::string_view title) {
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" class=\"{}\">{}{}</text>\n",
                       svg_number(x), svg_number(y), anchor_name(anchor), css_class,
                       title_element(title), html_escape(text));
}

void Svg::x_axis(const Scale& scale, double y, double grid_top, std::string_view label,
                 TickFormat format) {
  line(scale.from, y, scale.to, y, "axis");
  for (double v : scale.ticks()) {
    const double x = scale.at(v);
    line(x, grid_top, x, y, "grid");
    line(x, y, x, y + 4, "axis");
    text(x, y + 15, format(v), "tick", Anchor::middle);
  }
  text((scale.from + scale.to) / 2, y + 30, label, "label", Anchor::middle);
}

void Svg::y_axis(const Scale& scale, double x, double grid_right, std::string_view label,
                 TickFormat format) {
  line(x, scale.from, x, scale.to, "axis");
  for (double v : scale.ticks()) {
    const double y = scale.at(v);
    line(x, y, grid_right, y, "grid");
    line(x - 4, y, x, y, "axis");
    text(x - 6, y + 4, format(v), "tick", Anchor::end);
  }
  body_ += fmt::format(
      "<text x=\"12\" y=\"{0}\" text-anchor=\"middle\" class=\"label\" transform=\"rotate(-90 12 "
      "{0})\">{1}</text>\n",
      svg_number((scale.from + scale.to) / 2), html_escape(label));
}

std::string Svg::finish() && {
  body_ += "</svg>\n";
  return std::move(body_);
}

}  // namespace tunekit::detail
