// Error types: misuse is a UsageError, a broken invariant or lost device a FatalError.
// Per-candidate failures are values (see outcome.hpp), never these.
#pragma once

#include <stdexcept>
#include <string>

namespace tunekit {

// API misuse: unknown op, malformed option string, bad shape. The message says what to do.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Text that could not be parsed; carries the 0-based byte offset of the problem.
class ParseError : public UsageError {
 public:
  ParseError(const std::string& what, std::size_t position)
      : UsageError(what + " (at position " + std::to_string(position) + ")"), position_(position) {}
  std::size_t position() const { return position_; }

 private:
  std::size_t position_;
};

// Device lost, internal invariant broken, a user callback threw something tunekit cannot
// classify. Propagates out of every tunekit call.
class FatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tunekit
