#include "tunekit/reporter.hpp"

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/console_reporter.hpp"
#include "report/html_reporter.hpp"
#include "report/json_reporter.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

struct ReporterEntry {
  std::string_view name;
  std::unique_ptr<Reporter> (*make)();
};

template <class R>
std::unique_ptr<Reporter> make() {
  return std::make_unique<R>();
}

// The known reporters, by name. A new reporter is a file beside this one and a line here.
constexpr ReporterEntry kReporters[] = {
    {"console", &make<detail::ConsoleReporter>},
    {"json", &make<detail::JsonReporter>},
    {"html", &make<detail::HtmlReporter>},
};

}  // namespace

void Reporter::write_decisions(const DecisionsReport&, std::ostream&) {
  throw UsageError("only the html reporter writes a decisions report ('tunekit report')");
}

std::vector<std::string> reporter_names() {
  std::vector<std::string> names;
  for (const auto& entry : kReporters) names.emplace_back(entry.name);
  return names;
}

std::unique_ptr<Reporter> make_reporter(std::string_view name) {
  for (const auto& entry : kReporters)
    if (entry.name == name) return entry.make();
  std::string known;
  for (const auto& entry : kReporters) {
    if (!known.empty()) known += ", ";
    known += entry.name;
  }
  throw UsageError(fmt::format("unknown reporter '{}': use one of {}", name, known));
}

}  // namespace tunekit
