// Tests for src/stack/stack_decisions.cpp: what the controller's state keeps when a live ban
// and a tune of the same key overlap.
#include "stack/stack_decisions.hpp"

#include <gtest/gtest.h>

namespace tunekit::detail {
namespace {

StackDecision chose(const std::string& name) {
  StackDecision d;
  d.index = 1;
  d.chosen = name;
  return d;
}

stack::StackReport report_for(const Digest& key) {
  stack::StackReport r;
  r.cache_key = key;
  r.selected = "fast";
  return r;
}

// A tune read the bans when it began; a live execution of the old pick banned it meanwhile.
// Publishing that pick would serve a banned candidate to every later request.
TEST(StackDecisions, APickBannedWhileItWasMeasuredIsNotKept) {
  StackDecisions decisions(8);
  const Digest key = Digest::of("block");
  ASSERT_EQ(decisions.find(key, {}, true).found, StackDecisions::Found::claimed);
  (void)decisions.ban(key, "fast", "segfault-ish");
  (void)decisions.publish(key, chose("fast"), report_for(key));
  EXPECT_FALSE(decisions.decision(key));
  EXPECT_EQ(decisions.find(key, {}, true).found, StackDecisions::Found::claimed);
  const std::optional<stack::StackReport> r = decisions.report(key);
  ASSERT_TRUE(r);
  EXPECT_NE(r->note.find("banned while it was measured"), std::string::npos) << r->note;
}

TEST(StackDecisions, ABanOfAnotherCandidateKeepsThePick) {
  StackDecisions decisions(8);
  const Digest key = Digest::of("block");
  ASSERT_EQ(decisions.find(key, {}, true).found, StackDecisions::Found::claimed);
  (void)decisions.ban(key, "slow", "threw");
  (void)decisions.publish(key, chose("fast"), report_for(key));
  ASSERT_TRUE(decisions.decision(key));
  EXPECT_EQ(decisions.find(key, {}, true).found, StackDecisions::Found::hit);
}

}  // namespace
}  // namespace tunekit::detail
