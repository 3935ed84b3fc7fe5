// Tests for src/store/store.cpp: specs, the store options read from the environment.
#include "tunekit/store.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

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

}  // namespace
}  // namespace tunekit
