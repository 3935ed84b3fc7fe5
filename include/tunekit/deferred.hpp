// Deferred: a search whose report is delivered first and whose winner is built later, at most
// once (DESIGN §7 "Deferred"; seed 000). Tuner::tune_deferred makes one. The search's trials,
// inputs and device memory are released before it returns: dropping a Deferred unbuilt costs
// nothing on the device.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "tunekit/key.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/report.hpp"

namespace tunekit {

class OpBase;

// Advisory build (DESIGN §7): what happens when the candidate to ship fails to build.
struct AdvisoryBuild {
  // The default is built instead; this hears the candidate that failed and why.
  std::function<void(std::string_view candidate, const Outcome& cause)> on_fallback;
  // Which classified failures fall back (empty: every one). False: not recovered.
  std::function<bool(const Outcome& cause)> fallback_if;
  // A failure that is not recovered (fallback_if said no, or the default failed too), just
  // before it propagates.
  std::function<void(std::string_view candidate, const Outcome& cause)> on_unrecovered;

  // The decision for `candidate`'s classified build failure: true (on_fallback heard it) when
  // the default is to be built instead, false (on_unrecovered heard it) when it propagates.
  bool recover(std::string_view candidate, const Outcome& cause) const;
};

// What build() shipped.
struct Built {
  std::size_t index = 0;         // the candidate built: the report's winner, or the default
  std::string candidate;         // its name
  bool shipped_default = false;  // the winner failed to build and the default shipped
  Outcome cause;                 // why the default shipped (success otherwise)
};

class Deferred {
 public:
  // The op must outlive the Deferred. On a moved-from Deferred, build(), built(), builds()
  // and shipped_default() are a UsageError.
  Deferred(const OpBase& op, Key key, TuneReport report, AdvisoryBuild advisory);
  Deferred(Deferred&&) noexcept;
  Deferred& operator=(Deferred&&) noexcept;
  ~Deferred();

  const TuneReport& report() const { return report_; }
  // Builds the report's winner with the op's build step (Op::build; a space op's function
  // too), once. When it fails classified and the advisory allows, the default is built
  // instead (shipped_default). A FatalError propagates without retry; a failure of the
  // default itself propagates (as TrialError with its status). A second call returns the
  // same Built, or rethrows the same exception object. Thread-safe; the advisory's hooks run
  // while it builds, so a hook must not call back into this Deferred.
  const Built& build();
  bool built() const;
  // After build(): whether the default shipped instead of the reported winner.
  bool shipped_default() const;
  // Builds run so far: 0 before build(), 1 after (2 when the default was built after the
  // winner failed); a memoised call adds none.
  std::size_t builds() const;

 private:
  std::mutex& mutex() const;  // UsageError on a moved-from Deferred
  const Built& ship();
  Outcome build_one(std::size_t index);
  [[noreturn]] void fail(std::string_view candidate, const Outcome& cause);

  const OpBase* op_;
  Key key_;
  TuneReport report_;
  AdvisoryBuild advisory_;
  std::unique_ptr<std::mutex> mutex_;
  bool done_ = false;
  std::size_t builds_ = 0;
  Built built_;
  std::exception_ptr error_;
};

}  // namespace tunekit
