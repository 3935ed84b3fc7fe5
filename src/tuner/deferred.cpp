// Deferred: the report first, the build of what it ships later and at most once
// (include/tunekit/deferred.hpp).
#include "tunekit/deferred.hpp"

#include <utility>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/op.hpp"

namespace tunekit {

bool AdvisoryBuild::recover(std::string_view candidate, const Outcome& cause) const {
  if (fallback_if && !fallback_if(cause)) {
    if (on_unrecovered) on_unrecovered(candidate, cause);
    return false;
  }
  if (on_fallback) on_fallback(candidate, cause);
  return true;
}

Deferred::Deferred(const OpBase& op, Key key, TuneReport report, AdvisoryBuild advisory)
    : op_(&op),
      key_(std::move(key)),
      report_(std::move(report)),
      advisory_(std::move(advisory)),
      mutex_(std::make_unique<std::mutex>()) {}

// A moved-from Deferred has no mutex (and nothing to build): using it is misuse, said so
// instead of a null dereference.
std::mutex& Deferred::mutex() const {
  if (!mutex_)
    throw UsageError("this Deferred was moved from; build() and ask the one it was moved to");
  return *mutex_;
}

Deferred::Deferred(Deferred&&) noexcept = default;
Deferred& Deferred::operator=(Deferred&&) noexcept = default;
Deferred::~Deferred() = default;

const Built& Deferred::build() {
  std::lock_guard lock(mutex());
  if (!done_) {
    try {
      ship();
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
  }
  if (error_) std::rethrow_exception(error_);
  return built_;
}

bool Deferred::built() const {
  std::lock_guard lock(mutex());
  return done_ && !error_;
}

bool Deferred::shipped_default() const {
  std::lock_guard lock(mutex());
  return done_ && !error_ && built_.shipped_default;
}

std::size_t Deferred::builds() const {
  std::lock_guard lock(mutex());
  return builds_;
}

// One build; a FatalError propagates, any other exception is the candidate's compile failure.
Outcome Deferred::build_one(std::size_t index) {
  ++builds_;
  try {
    return op_->build_for(key_, index);
  } catch (...) {
    return detail::classify_exception(std::current_exception(), "a deferred build",
                                      Status::compile_failed);
  }
}

void Deferred::fail(std::string_view candidate, const Outcome& cause) {
  if (advisory_.on_unrecovered) advisory_.on_unrecovered(candidate, cause);
  throw TrialError(cause.status, std::string(candidate) + " failed to build: " + cause.message);
}

const Built& Deferred::ship() {
  const std::size_t winner = report_.winner;
  const std::size_t fallback = report_.default_index;
  const std::string winner_name = op_->candidate(winner).name;
  Outcome cause = build_one(winner);
  if (cause.ok()) {
    built_ = Built{winner, winner_name, false, Outcome::success()};
    return built_;
  }
  // The default itself failed, or the advisory does not recover this failure: it propagates.
  if (winner == fallback) fail(winner_name, cause);
  if (!advisory_.recover(winner_name, cause))
    throw TrialError(cause.status, winner_name + " failed to build: " + cause.message);
  const std::string default_name = op_->candidate(fallback).name;
  const Outcome default_cause = build_one(fallback);
  if (!default_cause.ok()) fail(default_name, default_cause);
  built_ = Built{fallback, default_name, true, cause};
  return built_;
}

}  // namespace tunekit
