// Workload: the inputs and outputs of one key as the tuner drives them (build, run, compare),
// with the output views and the tolerance a comparison uses. Op<Args> (op.hpp) makes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/outcome.hpp"

namespace tunekit {

// One output buffer a workload exposes for poisoning and comparison. Floating types are
// compared with the op's tolerance, integer types exactly. f16 and bf16 are given as their
// 16-bit patterns (IEEE binary16; bfloat16 = the high half of an f32).
struct OutputView {
  enum class Type { f32, f64, f16, bf16, i32, i64, u8 };
  void* data = nullptr;
  std::size_t count = 0;
  Type type = Type::f32;

  static OutputView of(std::span<float> s) { return {s.data(), s.size(), Type::f32}; }
  static OutputView of(std::span<double> s) { return {s.data(), s.size(), Type::f64}; }
  static OutputView of(std::span<std::int32_t> s) { return {s.data(), s.size(), Type::i32}; }
  static OutputView of(std::span<std::int64_t> s) { return {s.data(), s.size(), Type::i64}; }
  static OutputView of(std::span<std::uint8_t> s) { return {s.data(), s.size(), Type::u8}; }
  // Named makers: a std::uint16_t buffer could hold either 16-bit float format.
  static OutputView f16(std::span<std::uint16_t> bits) {
    return {bits.data(), bits.size(), Type::f16};
  }
  static OutputView bf16(std::span<std::uint16_t> bits) {
    return {bits.data(), bits.size(), Type::bf16};
  }
  bool integral() const { return type == Type::i32 || type == Type::i64 || type == Type::u8; }
};

// |got - expected| <= abs + rel * |expected|, element-wise; NaN never passes.
struct Tolerance {
  double abs = 1e-6;
  double rel = 1e-5;
};

// The inputs and outputs of one key, owned by the tuner during a search.
class Workload {
 public:
  virtual ~Workload() = default;
  // Builds what candidate `index` launches (the op's build step: a runtime compilation for
  // source backends), so no timing window carries a build. Safe to call from several threads
  // at once for different candidates; a second call for the same candidate is cheap (the
  // backend caches builds). A failure is an outcome (compile_failed with the log) or throws.
  virtual Outcome build_candidate(std::size_t index) = 0;
  virtual void run_candidate(std::size_t index) = 0;
  virtual void run_reference() = 0;
  // Stops what candidate `index` left running after it returned (Op::quiesce), after each of
  // its timing windows; quiesces() says whether it does anything (a window then begins with a
  // warmup launch, which restarts what was stopped).
  virtual void quiesce_candidate(std::size_t /*index*/) {}
  virtual bool quiesces() const { return false; }
  virtual std::vector<OutputView> outputs() = 0;
  // The op's validation hooks (Op::validator), run by OutputCheck: after the outputs are
  // poisoned, and after they matched the reference (an error text fails the candidate).
  virtual void before_check() {}
  virtual std::optional<std::string> after_check() { return std::nullopt; }
  // Puts the inputs back as they were made, in place (the same buffers), so no candidate sees
  // another's side effects. False: this workload cannot; make a fresh one instead.
  virtual bool restore_inputs() { return false; }
};

}  // namespace tunekit
