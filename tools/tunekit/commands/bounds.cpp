#include "commands/bounds.hpp"

#include <charconv>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tunekit::cli {
namespace {

// Parses all of `text` as T in base 10 (no sign for unsigned, no leading '+', no spaces).
template <class T>
bool parse_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && stop == end && !text.empty();
}

template <class T>
CLI::Validator whole_in(T min, T max) {
  const std::string range = fmt::format("[{}, {}]", min, max);
  return CLI::Validator(
      [min, max, range](std::string& input) {
        T value{};
        if (!parse_whole(input, value) || value < min || value > max)
          return fmt::format("must be an integer in {}, got {}", range, input);
        input = fmt::format("{}", value);  // "0010" stays ten for CLI11's own conversion
        return std::string();
      },
      "INT in " + range);
}

}  // namespace

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  return whole_in<std::int64_t>(min, max);
}

CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max) {
  return whole_in<std::uint64_t>(min, max);
}

CLI::Validator real_in(double min, double max) {
  const std::string range = fmt::format("[{:g}, {:g}]", min, max);
  return CLI::Validator(
      [min, max, range](std::string& input) {
        double value = 0;
        // NaN fails both comparisons; "inf" is outside every finite range.
        if (!parse_whole(input, value) || !(value >= min && value <= max))
          return fmt::format("must be a number in {}, got {}", range, input);
        return std::string();
      },
      "NUMBER in " + range);
}

}  // namespace tunekit::cli
