// Bucketing: how an op rounds one integer key field so that one stored choice serves a range
// of sizes (DESIGN §3). A bucket is searched at its representative, its upper bound: a choice
// measured there covers every size up to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tunekit {

// The closed range [lower, upper] of one value's bucket; upper is its representative.
struct Bucket {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  friend bool operator==(const Bucket&, const Bucket&) = default;
};

class Bucketing {
 public:
  enum class Kind { pow2, multiple_of, ranges };

  // The next power of two >= v: 100, 120 and 128 share 128 (bucket 65..128); 129 maps to
  // 256. A value <= 0, or one past 2^62 (its power of two does not fit), is its own bucket.
  static Bucketing pow2();
  // ceil(v / n) * n: with n = 64, 1..64 -> 64, 65..128 -> 128. n <= 0 is a UsageError. A
  // value whose multiple does not fit in 64 bits is its own bucket.
  static Bucketing multiple_of(std::int64_t n);
  // Explicit ranges given by their upper bounds, strictly ascending (else UsageError): a
  // value maps to the smallest bound >= it; a value past the last bound is its own bucket
  // (nothing was declared to cover it, so it is kept exact).
  static Bucketing ranges(std::vector<std::int64_t> upper_bounds);

  Kind kind() const { return kind_; }
  // The bucket of `value` (never throws; no overflow for any int64 value).
  Bucket bucket(std::int64_t value) const;
  // Its representative: bucket(value).upper.
  std::int64_t representative(std::int64_t value) const { return bucket(value).upper; }
  // "pow2", "multiple_of:64", "ranges:64,256,1024": the canonical text (part of the op's
  // candidate-set checksum) and what explain shows.
  std::string text() const;

  friend bool operator==(const Bucketing&, const Bucketing&) = default;

 private:
  Bucketing(Kind kind, std::int64_t step, std::vector<std::int64_t> bounds);

  Kind kind_;
  std::int64_t step_ = 1;             // multiple_of
  std::vector<std::int64_t> bounds_;  // ranges
};

}  // namespace tunekit
