#include "progress_bar.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <utility>

#include <fmt/format.h>

namespace tunekit::cli {
namespace {

// Three significant digits in ns, us, ms or s (ASCII: progress often ends up in logs).
std::string ascii_seconds_text(double s) {
  if (!std::isfinite(s) || s <= 0) return "-";
  constexpr std::pair<double, const char*> kUnits[] = {
      {1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1.0, "s"}};
  for (const auto& [scale, unit] : kUnits) {
    const double v = s / scale;
    if (v >= 999.5 && scale < 1.0) continue;
    const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    return fmt::format("{:.{}f} {}", v, decimals, unit);
  }
  return "-";
}

// Cuts ASCII-or-UTF-8 text to `width` bytes at a code point boundary.
std::string cut(std::string text, std::size_t width) {
  if (text.size() <= width) return text;
  std::size_t end = width;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) --end;
  text.resize(end);
  return text;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find_first_of("\r\n"));
}

}  // namespace

std::string describe_result(const CandidateReport& result, std::size_t width) {
  std::string text(to_string(result.outcome.status));
  if (result.outcome.ok()) {
    text += fmt::format(" {}", ascii_seconds_text(result.score));
  } else if (!result.outcome.message.empty()) {
    text += fmt::format(": {}", first_line(result.outcome.message));
  }
  return cut(std::move(text), width);
}

ProgressBar::ProgressBar(std::ostream& out, bool interactive, std::size_t columns)
    : out_(out), interactive_(interactive), columns_(std::max<std::size_t>(columns, 20)) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(const ProgressEvent& event) {
  std::lock_guard lock(mutex_);
  const std::size_t total = event.total;
  const std::size_t number = event.position + 1;
  if (!interactive_) {
    if (event.result == nullptr) return;  // plain output: one line per finished candidate
    out_ << fmt::format("[{}/{}] {} {}\n", number, total, event.candidate,
                        describe_result(*event.result, 100))
         << std::flush;
    return;
  }
  std::string text(event.candidate);
  if (event.result != nullptr) text += fmt::format(" {}", describe_result(*event.result, columns_));
  draw(event.result != nullptr ? number : event.position, total, text);
}

void ProgressBar::draw(std::size_t done, std::size_t total, const std::string& text) {
  constexpr std::size_t kBarWidth = 24;
  const std::size_t filled = total == 0 ? 0 : std::min(kBarWidth, done * kBarWidth / total);
  std::string line = fmt::format("[{}{}] {}/{} {}", std::string(filled, '#'),
                                 std::string(kBarWidth - filled, '.'), done, total, text);
  // Never wrap: a wrapped line cannot be redrawn with a carriage return.
  line = cut(std::move(line), columns_ - 1);
  out_ << "\r\033[2K" << line << std::flush;
  drawn_ = true;
}

void ProgressBar::finish() {
  std::lock_guard lock(mutex_);
  if (interactive_ && drawn_) out_ << "\r\033[2K" << std::flush;
  drawn_ = false;
}

bool ProgressBar::stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

std::size_t ProgressBar::stderr_columns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace tunekit::cli
