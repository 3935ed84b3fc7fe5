// Tests for src/store/store.cpp: specs, the store options read from the environment, lease
// holder names.
#include "tunekit/store.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

using std::chrono::milliseconds;

std::function<const char*(const char*)> env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(StoreOptions, DefaultsWaitBrieflyForReadsAndTrustNothing) {
  const StoreOptions o = store_options_from_environment(env({}));
  EXPECT_LE(o.read_wait, milliseconds(2000));
  EXPECT_GE(o.write_wait, o.read_wait);
  EXPECT_FALSE(o.trust);
  EXPECT_TRUE(o.create);
}

TEST(StoreOptions, WaitsAndTrustAreReadFromTheEnvironment) {
  StoreOptions o = store_options_from_environment(env({{"TUNEKIT_STORE_WAIT_MS", "250,900"}}));
  EXPECT_EQ(o.read_wait, milliseconds(250));
  EXPECT_EQ(o.write_wait, milliseconds(900));
  // One number sets the read wait; writes never wait less than reads.
  o = store_options_from_environment(env({{"TUNEKIT_STORE_WAIT_MS", "100"}}));
  EXPECT_EQ(o.read_wait, milliseconds(100));
  EXPECT_EQ(o.write_wait, StoreOptions{}.write_wait);
  o = store_options_from_environment(env({{"TUNEKIT_STORE_WAIT_MS", "9000"}}));
  EXPECT_EQ(o.write_wait, milliseconds(9000));
  EXPECT_TRUE(store_options_from_environment(env({{"TUNEKIT_TRUST_STORE", "1"}})).trust);
  EXPECT_FALSE(store_options_from_environment(env({{"TUNEKIT_TRUST_STORE", "0"}})).trust);
}

TEST(StoreOptions, MalformedValuesAreUsageErrorsNamingTheVariable) {
  for (const char* bad : {"abc", "-1", "1.5", "2000,", ",2000", "700000", "1,2,3", "nan"}) {
    try {
      store_options_from_environment(env({{"TUNEKIT_STORE_WAIT_MS", bad}}));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("TUNEKIT_STORE_WAIT_MS"), std::string::npos);
    }
  }
  EXPECT_THROW(store_options_from_environment(env({{"TUNEKIT_TRUST_STORE", "yes"}})), UsageError);
}

TEST(StoreSpec, NoneOpensNothingAndABadSpecSaysWhatToUse) {
  const StoreOpening none = open_store_checked("none", StoreOptions{}, {});
  EXPECT_EQ(none.state, StoreState::none);
  EXPECT_EQ(none.store, nullptr);
  try {
    open_store_checked("redis://x", StoreOptions{}, {});
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sqlite:PATH"), std::string::npos) << e.what();
  }
  EXPECT_EQ(to_string(StoreState::locked), "locked");
  EXPECT_EQ(to_string(StoreState::read_only), "read_only");
}

std::vector<std::string> parts_of(const std::string& holder) {
  std::vector<std::string> parts;
  std::istringstream in(holder);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  return parts;
}

// HOST:PID:START:N; two tuners of one process, and two processes, never share a name.
TEST(LeaseHolderName, NamesTheHostThePidTheStartAndTheTuner) {
  const std::string first = lease_holder_name(0);
  const std::string second = lease_holder_name(1);
  EXPECT_NE(first, second);
  EXPECT_EQ(first, lease_holder_name(0)) << "one process, one tuner: one name";
  const auto parts = parts_of(first);
  ASSERT_EQ(parts.size(), 4u) << first;
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(parts[0], host);
  EXPECT_EQ(parts[1], std::to_string(::getpid()));
  EXPECT_FALSE(parts[2].empty());
  EXPECT_EQ(parts[3], "0");
  EXPECT_EQ(parts_of(second)[3], "1");
  int names[2];
  ASSERT_EQ(::pipe(names), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string child = lease_holder_name(0);
    ::_exit(::write(names[1], child.data(), child.size()) == static_cast<ssize_t>(child.size())
                ? 0
                : 1);
  }
  ::close(names[1]);
  std::string child;
  char buffer[256];
  for (ssize_t got; (got = ::read(names[0], buffer, sizeof buffer)) > 0;) child.append(buffer, got);
  ::close(names[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(child, first) << "another process of the same host";
  EXPECT_EQ(parts_of(child)[0], parts[0]);
}

TEST(LeaseState, HasANameForEveryState) {
  EXPECT_EQ(to_string(LeaseState::held), "held");
  EXPECT_EQ(to_string(LeaseState::busy), "busy");
  EXPECT_EQ(to_string(LeaseState::unavailable), "unavailable");
}

}  // namespace
}  // namespace tunekit
