#include "tuner/admission.hpp"

#include <exception>
#include <string>

#include "core/classify.hpp"

namespace tunekit::detail {

std::optional<Outcome> precheck(const Candidate& cand, const Key& key, Numerics policy) {
  if (cand.numerics > policy) {
    return Outcome{Status::skipped, "numerics class '" + std::string(to_string(cand.numerics)) +
                                        "' is not admitted by the policy '" +
                                        std::string(to_string(policy)) + "'"};
  }
  if (cand.eligible) {
    try {
      if (auto reason = cand.eligible(key)) return Outcome{Status::rejected, *reason};
    } catch (...) {
      return classify_exception(std::current_exception(), "eligibility check", Status::rejected);
    }
  }
  return std::nullopt;
}

}  // namespace tunekit::detail
