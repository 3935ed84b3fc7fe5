// The CPU a thread of this process last ran on, from /proc/self/task/<tid>/stat (field 39),
// for the tests of thread placement; -1 where it cannot be read.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tunekit::testing {

inline int last_cpu(int tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (!file) return -1;
  char buffer[1024];
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  buffer[n] = '\0';
  // Fields after the command's closing parenthesis start at 3 (the state).
  const char* p = std::strrchr(buffer, ')');
  if (!p) return -1;
  int field = 2;
  while (*p && field < 39) {
    p = std::strchr(p + 1, ' ');
    if (!p) return -1;
    ++field;
  }
  return std::atoi(p + 1);
}

}  // namespace tunekit::testing
