#include "commands/verbosity.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

namespace tunekit::cli {
namespace {

const CLI::App& root_of(const CLI::App& app) {
  const CLI::App* root = &app;
  while (root->get_parent() != nullptr) root = root->get_parent();
  return *root;
}

int count_of(const CLI::App& root, const char* name) {
  const CLI::Option* option = root.get_option_no_throw(name);
  return option ? static_cast<int>(option->count()) : 0;
}

}  // namespace

void add_verbosity_flags(CLI::App& root) {
  root.add_flag("-v,--verbose")
      ->description(
          "More on stderr: each candidate's outcome and each cut (debug); the starting "
          "level is TUNEKIT_LOG=error|warn|info|debug (default info: what was searched, "
          "stored and served)");
  root.add_flag("-q,--quiet")
      ->description("Less on stderr: -q warnings and errors only (no progress), -qq errors only");
  root.fallthrough();
}

LogLevel tool_log_level(const CLI::App& app) {
  const CLI::App& root = root_of(app);
  const LogLevel base = log_level_from_environment([](const char* name) {
                          return std::getenv(name);
                        }).value_or(LogLevel::info);
  const int level =
      static_cast<int>(base) + count_of(root, "--verbose") - count_of(root, "--quiet");
  return static_cast<LogLevel>(
      std::clamp(level, static_cast<int>(LogLevel::error), static_cast<int>(LogLevel::debug)));
}

Log tool_log(const CLI::App& app) {
  return Log(make_stream_logger(std::cerr, tool_log_level(app)));
}

bool shows_progress(const CLI::App& app) {
  return tool_log_level(app) >= LogLevel::info;
}

}  // namespace tunekit::cli
