// Tests src/store/digest_lookup.cpp: stored choices found by a digest or a prefix of one, an op
// name, or a key typed as the op reads it.
#include <optional>
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

// Reads "n=V" as the op would, with a pow2 bucket over n for op "bucketed" (100 -> 128).
std::optional<std::string> canonical(const std::string& op, const std::string& typed) {
  if (typed.rfind("n=", 0) != 0) return std::nullopt;
  long n = std::stol(typed.substr(2));
  if (op == "bucketed") {
    long up = 1;
    while (up < n) up *= 2;
    n = up;
  }
  return "n=" + std::to_string(n) + ",dtype=f32";
}

StoredChoice keyed(std::string op, std::string key, std::string identity) {
  StoredChoice c;
  c.op = std::move(op);
  c.key = std::move(key);
  c.identity_digest = std::move(identity);
  return c;
}

std::vector<StoredChoice> keyed_entries() {
  return {keyed("sum", "n=1000,dtype=f32", "aaaaaa01"),
          keyed("bucketed", "n=128,dtype=f32", "bbbbbb01"),
          keyed("softmax", "n=1000,dtype=f32", "cccccc01")};
}

TEST(StoredLookup, AKeyFindsItsEntryByTextOrAsTheOpReadsIt) {
  const auto entries = keyed_entries();
  StoredLookup how;
  how.canonical = canonical;
  EXPECT_EQ(find_stored(entries, "n=1000,dtype=f32", how).size(), 2u);  // two ops, one key
  const auto typed = find_stored(entries, "n=1000", how);               // defaults filled by the op
  ASSERT_EQ(typed.size(), 2u);
  EXPECT_EQ(typed[0], &entries[0]);
  const auto in_bucket = find_stored(entries, "n=100", how);  // a size of the bucket
  ASSERT_EQ(in_bucket.size(), 1u);
  EXPECT_EQ(in_bucket[0], &entries[1]);
  EXPECT_TRUE(find_stored(entries, "n=5000", how).empty());
  // Without a canonicaliser only the stored text matches.
  EXPECT_TRUE(find_stored(entries, "n=1000", StoredLookup{}).empty());
}

TEST(StoredLookup, AnOpRestrictsAndOpNamesAndDigestsCountOnlyWhenAsked) {
  const auto entries = keyed_entries();
  StoredLookup how;
  how.canonical = canonical;
  how.op = "softmax";
  const auto only = find_stored(entries, "n=1000", how);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0], &entries[2]);
  how.op.clear();
  EXPECT_TRUE(find_stored(entries, "sum", how).empty());
  how.ops = true;
  EXPECT_EQ(find_stored(entries, "sum", how).size(), 1u);
  EXPECT_EQ(find_stored(entries, "bbbbbb01", how).size(), 1u);
  how.digests = false;  // a --shape value is a key, never a digest
  EXPECT_TRUE(find_stored(entries, "bbbbbb01", how).empty());
}

TEST(StoredLookup, NamesKeyComparesTextThenTheOpsReading) {
  EXPECT_TRUE(names_key("sum", "n=1", "n=1", {}));
  EXPECT_FALSE(names_key("sum", "n=1,dtype=f32", "n=1", {}));
  EXPECT_TRUE(names_key("sum", "n=1,dtype=f32", "n=1", canonical));
  EXPECT_TRUE(names_key("bucketed", "n=128,dtype=f32", "n=65", canonical));
  EXPECT_FALSE(names_key("bucketed", "n=128,dtype=f32", "n=129", canonical));
}

}  // namespace
}  // namespace tunekit
