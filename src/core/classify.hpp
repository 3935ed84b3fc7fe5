// Turns an exception thrown by candidate code into a classified Outcome (DESIGN §4).
#pragma once

#include <exception>
#include <string_view>

#include "tunekit/outcome.hpp"

namespace tunekit::detail {

// TrialError keeps its status; std::bad_alloc is out_of_memory; another std::exception, or
// something that is not one (`throw 42`), is `fallback` (launch_failed by default).
// FatalError is rethrown: it is not the candidate's failure to classify.
Outcome classify_exception(std::exception_ptr error, std::string_view during,
                           Status fallback = Status::launch_failed);

}  // namespace tunekit::detail
