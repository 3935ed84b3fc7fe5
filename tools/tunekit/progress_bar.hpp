// Progress of a search on a stream (stderr): a redrawn bar on a terminal, one plain line per
// finished candidate otherwise (logs, pipes, CI).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>

#include "tunekit/tuner.hpp"

namespace tunekit::cli {

class ProgressBar {
 public:
  // interactive: redraw one line in place (the stream is a terminal `columns` wide).
  ProgressBar(std::ostream& out, bool interactive, std::size_t columns = 80);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Suitable as TunerOptions::hooks.on_progress (called once when a candidate starts, once with
  // its result when it is finished).
  void update(const ProgressEvent& event);
  // Erases the bar (interactive only); called by the destructor too.
  void finish();

  // Whether stderr is a terminal, and its width (80 when unknown).
  static bool stderr_is_terminal();
  static std::size_t stderr_columns();

 private:
  void draw(std::size_t done, std::size_t total, const std::string& text);

  std::ostream& out_;
  bool interactive_;
  std::size_t columns_;
  bool drawn_ = false;
  std::mutex mutex_;
};

// "ok 1.23 ms" / "validation_failed: element 3 ..." for one finished candidate.
std::string describe_result(const CandidateReport& result, std::size_t width);

}  // namespace tunekit::cli
