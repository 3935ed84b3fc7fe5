// Tests src/store/digest_lookup.cpp: stored choices found by a digest or a prefix of one.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit {
namespace {

StoredChoice entry(std::string identity, std::string key_digest) {
  StoredChoice c;
  c.identity_digest = std::move(identity);
  c.key_digest = std::move(key_digest);
  c.op = "sum";
  c.key = "n=" + c.identity_digest.substr(0, 3);
  return c;
}

const std::vector<StoredChoice> kEntries{
    entry("abcdef0123456789abcdef0123456789", "11111111111111111111111111111111"),
    entry("abcdef9999999999999999999999999f", "22222222222222222222222222222222"),
    entry("0123456789abcdef0123456789abcdef", "33333333333333333333333333333333"),
};

TEST(DigestLookup, AUniquePrefixOfSixOrMoreDigitsNamesAnEntry) {
  const auto found = find_by_digest(kEntries, "012345");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], &kEntries[2]);
  EXPECT_EQ(find_by_digest(kEntries, "ABCDEF0").size(), 1u) << "either case";
  EXPECT_TRUE(find_by_digest(kEntries, "01234").empty()) << "five digits are too few";
}

TEST(DigestLookup, AFullDigestOrAKeyDigestNamesItsEntry) {
  EXPECT_EQ(find_by_digest(kEntries, kEntries[1].identity_digest).at(0), &kEntries[1]);
  EXPECT_EQ(find_by_digest(kEntries, "33333333333333333333333333333333").at(0), &kEntries[2]);
  EXPECT_TRUE(find_by_digest(kEntries, "n=abc").empty()) << "not hex: names nothing";
}

TEST(DigestLookup, AnAmbiguousPrefixSaysWhichEntriesItCouldMean) {
  try {
    find_by_digest(kEntries, "abcdef");
    FAIL() << "an ambiguous prefix was accepted";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("ambiguous"), std::string::npos) << message;
    EXPECT_NE(message.find("give more digits"), std::string::npos) << message;
    EXPECT_NE(message.find(kEntries[0].identity_digest), std::string::npos) << message;
    EXPECT_NE(message.find(kEntries[1].identity_digest), std::string::npos) << message;
  }
}

TEST(DigestLookup, NamesIdentityTakesPrefixesOfSixDigits) {
  EXPECT_TRUE(names_identity("abcdef0123", "ABCDEF"));
  EXPECT_FALSE(names_identity("abcdef0123", "abcde"));
  EXPECT_FALSE(names_identity("abcdef0123", "abcdeg"));
}

}  // namespace
}  // namespace tunekit
