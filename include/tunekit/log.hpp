// The one logging seam: levelled messages from the library and the tool, to a Logger the caller
// gives. TUNEKIT_LOG (error|warn|info|debug) is read once at the edge (TunerOptions::
// from_environment, the tool's -v/-q on top); nothing here reads the environment by itself.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tunekit {

// Ordered by how much is shown: a threshold of `info` shows error, warn and info.
enum class LogLevel : unsigned char { error, warn, info, debug };

std::string_view to_string(LogLevel level);
// "error", "warn" (or "warning"), "info", "debug"; anything else is nullopt.
std::optional<LogLevel> log_level_from_string(std::string_view text);
// TUNEKIT_LOG through getenv: unset or empty is nullopt, a bad value a UsageError naming it.
std::optional<LogLevel> log_level_from_environment(
    const std::function<const char*(const char*)>& getenv);

// Where messages go. Implementations are thread-safe: the tuner logs from callers' threads.
class Logger {
 public:
  virtual ~Logger() = default;
  // Whether a message at `level` would be written (callers skip building debug text when not).
  virtual bool enabled(LogLevel level) const = 0;
  // One message, without a trailing newline or a "tunekit:" prefix.
  virtual void write(LogLevel level, std::string_view message) = 0;
};

// Lines on a stream, "tunekit: warning: MESSAGE" (info: "tunekit: MESSAGE"), with outside
// text made terminal-safe; one line at a time under a mutex.
std::shared_ptr<Logger> make_stream_logger(std::ostream& out, LogLevel threshold);
// Messages at or under `threshold` to a function (tests, applications with their own logging).
std::shared_ptr<Logger> make_function_logger(LogLevel threshold,
                                             std::function<void(LogLevel, std::string_view)> write);

// A handle to a logger, cheap to copy; an empty one drops everything.
class Log {
 public:
  Log() = default;
  explicit Log(std::shared_ptr<Logger> logger) : logger_(std::move(logger)) {}

  bool enabled(LogLevel level) const { return logger_ && logger_->enabled(level); }
  void write(LogLevel level, std::string_view message) const {
    if (enabled(level)) logger_->write(level, message);
  }
  void error(std::string_view message) const { write(LogLevel::error, message); }
  void warn(std::string_view message) const { write(LogLevel::warn, message); }
  void info(std::string_view message) const { write(LogLevel::info, message); }
  void debug(std::string_view message) const { write(LogLevel::debug, message); }
  // For text that costs something to build: `make` runs only when `level` is shown.
  template <class Make>
  void lazy(LogLevel level, Make&& make) const {
    if (enabled(level)) logger_->write(level, std::forward<Make>(make)());
  }

  // Warnings (and errors) only, to a plain function: for callers that just collect them.
  static Log warnings_to(std::function<void(std::string_view)> sink);
  // The warn level as the plain function the store and artifact readers take (WarningSink).
  std::function<void(std::string_view)> warning_sink() const;
  const std::shared_ptr<Logger>& logger() const { return logger_; }
  explicit operator bool() const { return logger_ != nullptr; }

 private:
  std::shared_ptr<Logger> logger_;
};

}  // namespace tunekit
