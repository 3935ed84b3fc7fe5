#include "tunekit/log.hpp"

#include <mutex>
#include <ostream>
#include <utility>

#include "tunekit/errors.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit {
namespace {

std::string_view line_prefix(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return "tunekit: error: ";
    case LogLevel::warn:
      return "tunekit: warning: ";
    case LogLevel::info:
      return "tunekit: ";
    case LogLevel::debug:
      return "tunekit: debug: ";
  }
  return "tunekit: ";
}

class StreamLogger final : public Logger {
 public:
  StreamLogger(std::ostream& out, LogLevel threshold) : out_(out), threshold_(threshold) {}
  bool enabled(LogLevel level) const override { return level <= threshold_; }
  void write(LogLevel level, std::string_view message) override {
    if (!enabled(level)) return;
    // Built first, written once: lines of threads logging together never interleave.
    std::string line(line_prefix(level));
    line += terminal_safe(message);
    line += '\n';
    const std::lock_guard lock(mutex_);
    out_ << line << std::flush;
  }

 private:
  std::ostream& out_;
  LogLevel threshold_;
  std::mutex mutex_;
};

class FunctionLogger final : public Logger {
 public:
  FunctionLogger(LogLevel threshold, std::function<void(LogLevel, std::string_view)> write)
      : threshold_(threshold), write_(std::move(write)) {}
  bool enabled(LogLevel level) const override { return write_ && level <= threshold_; }
  void write(LogLevel level, std::string_view message) override {
    if (!enabled(level)) return;
    const std::lock_guard lock(mutex_);
    write_(level, message);
  }

 private:
  LogLevel threshold_;
  std::function<void(LogLevel, std::string_view)> write_;
  // One call at a time (callers collect into plain vectors), but a callback that logs again
  // on its own thread must not deadlock.
  std::recursive_mutex mutex_;
};

}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return "error";
    case LogLevel::warn:
      return "warn";
    case LogLevel::info:
      return "info";
    case LogLevel::debug:
      return "debug";
  }
  return "warn";
}

std::optional<LogLevel> log_level_from_string(std::string_view text) {
  if (text == "error") return LogLevel::error;
  if (text == "warn" || text == "warning") return LogLevel::warn;
  if (text == "info") return LogLevel::info;
  if (text == "debug") return LogLevel::debug;
  return std::nullopt;
}

std::optional<LogLevel> log_level_from_environment(
    const std::function<const char*(const char*)>& getenv) {
  const char* value = getenv("TUNEKIT_LOG");
  if (!value || !*value) return std::nullopt;
  if (auto level = log_level_from_string(value)) return level;
  throw UsageError("TUNEKIT_LOG='" + terminal_safe(value) +
                   "': use error, warn, info or debug (unset: warn for the library, info for the "
                   "tunekit tool)");
}

std::shared_ptr<Logger> make_stream_logger(std::ostream& out, LogLevel threshold) {
  return std::make_shared<StreamLogger>(out, threshold);
}

std::shared_ptr<Logger> make_function_logger(
    LogLevel threshold, std::function<void(LogLevel, std::string_view)> write) {
  return std::make_shared<FunctionLogger>(threshold, std::move(write));
}

Log Log::warnings_to(std::function<void(std::string_view)> sink) {
  return Log(make_function_logger(
      LogLevel::warn, [sink = std::move(sink)](LogLevel, std::string_view m) { sink(m); }));
}

std::function<void(std::string_view)> Log::warning_sink() const {
  if (!logger_) return {};
  return [logger = logger_](std::string_view message) {
    if (logger->enabled(LogLevel::warn)) logger->write(LogLevel::warn, message);
  };
}

}  // namespace tunekit
