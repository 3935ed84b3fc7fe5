#include "core/classify.hpp"

#include <new>
#include <string>

#include "tunekit/errors.hpp"

namespace tunekit::detail {

Outcome classify_exception(std::exception_ptr error, std::string_view during, Status fallback) {
  const std::string prefix = std::string(during) + ": ";
  try {
    std::rethrow_exception(error);
  } catch (const FatalError&) {
    throw;
  } catch (const TrialError& e) {
    return Outcome{e.status(), prefix + e.what()};
  } catch (const std::bad_alloc& e) {
    return Outcome{Status::out_of_memory, prefix + e.what()};
  } catch (const std::exception& e) {
    return Outcome{fallback, prefix + e.what()};
  } catch (...) {
    // A candidate that throws an int is hostile or broken, not a reason to stop the search.
    return Outcome{fallback, prefix + "threw something that is not a std::exception"};
  }
}

}  // namespace tunekit::detail
