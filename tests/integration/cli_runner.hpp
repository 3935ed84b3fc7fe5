// Runs the built tunekit binary for end-to-end tests: each run gets a private environment
// (TUNEKIT_MODE, TUNEKIT_ARTIFACT_DIR, XDG_CACHE_HOME, TUNEKIT_STORE and TUNEKIT_LOG unset;
// TUNEKIT_CACHE_DIR given), so nothing of the user's or of another test leaks in. The binary is
// the one built beside the tests (TUNEKIT_CLI_PATH), or TUNEKIT_TEST_CLI when that is set: the
// tests moved to another machine (scripts/gpu-check --bundle) run the tunekit moved with them.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#ifndef TUNEKIT_CLI_PATH
#error "TUNEKIT_CLI_PATH must name the built tunekit binary"
#endif

namespace tunekit::testing {

// The quick tune many CLI tests start from: sum at n=1000, quiet, the report as JSON.
inline constexpr const char* kTuneSum = "tune sum --shape n=1000 -q --json";

struct CliResult {
  int status = -1;  // exit status; 128 + signal when killed
  std::string out;
  std::string err;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The run's stdout as JSON; a test failure (and an empty object) when it is not JSON.
inline nlohmann::json parse_json(const CliResult& run) {
  try {
    return nlohmann::json::parse(run.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "):\n" << run.out << "\nstderr:\n" << run.err;
    return nlohmann::json::object();
  }
}

// A temporary directory removed with the object.
class TempDir {
 public:
  TempDir() {
    char dir_template[] = "/tmp/tunekit_cli_test_XXXXXX";
    if (mkdtemp(dir_template) != nullptr) path_ = dir_template;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The tunekit binary the tests run.
inline std::string cli_path() {
  const char* moved = std::getenv("TUNEKIT_TEST_CLI");
  return moved != nullptr && *moved != '\0' ? moved : TUNEKIT_CLI_PATH;
}

// Runs `tunekit <args>` with TUNEKIT_CACHE_DIR=`cache_dir`, `env` ("NAME=value ..." words)
// added, stderr captured through a file in `scratch`.
inline CliResult run_cli(const std::string& args, const std::filesystem::path& cache_dir,
                         const std::filesystem::path& scratch, const std::string& env = "") {
  CliResult run;
  const std::string err_path = (scratch / "stderr").string();
  const std::string command =
      "env -u TUNEKIT_MODE -u TUNEKIT_ARTIFACT_DIR -u XDG_CACHE_HOME -u TUNEKIT_STORE -u "
      "TUNEKIT_LOG TUNEKIT_CACHE_DIR='" +
      cache_dir.string() + "' " + env + " '" + cli_path() + "' " + args + " 2>'" + err_path + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    run.err = "popen failed";
    return run;
  }
  char buffer[4096];
  std::size_t got = 0;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, got);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.err = read_text(err_path);
  return run;
}

// One run in a fresh temporary cache directory.
inline CliResult run_cli_fresh(const std::string& args, const std::string& env = "") {
  TempDir dir;
  if (dir.path().empty()) return CliResult{-1, "", "mkdtemp failed"};
  return run_cli(args, dir / "cache", dir.path(), env);
}

}  // namespace tunekit::testing
