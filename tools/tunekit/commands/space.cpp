// tunekit space FILE [--list N] [--json]: counts (and lists) the valid configurations of a T1
// space file.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "tunekit/space.hpp"
#include "tunekit/value_json.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct SpaceOptions {
  std::string file;
  std::size_t list = 0;
  bool json = false;
};

void run_space(const SpaceOptions& options) {
  const Space space = read_t1_space(options.file);
  const auto start = std::chrono::steady_clock::now();
  const Enumeration e = space.enumerate();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::size_t shown = std::min(options.list, e.size());
  if (options.json) {
    Json j;
    j["file"] = options.file;
    j["parameters"] = space.parameters().size();
    j["constraints"] = space.constraints().size();
    j["cartesian"] = space.cartesian_size();
    j["valid"] = e.size();
    j["enumerate_ms"] = ms;
    Json list = Json::array();
    for (std::size_t i = 0; i < shown; ++i) {
      Json c = Json::object();
      const Config config = e.config(i);
      for (const Field& f : config.fields()) c[f.name] = value_json(f.value);
      list.push_back(std::move(c));
    }
    j["configs"] = std::move(list);
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format(
      "{}: {} valid configurations ({} parameters, {} constraints, "
      "{:.0f} in the Cartesian product; enumerated in {:.1f} ms)\n",
      options.file, e.size(), space.parameters().size(), space.constraints().size(),
      space.cartesian_size(), ms);
  for (std::size_t i = 0; i < shown; ++i) std::cout << e.config(i).text() << '\n';
}

}  // namespace

void register_space(CLI::App& app) {
  auto options = std::make_shared<SpaceOptions>();
  CLI::App* cmd =
      app.add_subcommand("space", "Count (and list) the valid configurations of a T1 space file");
  cmd->add_option("file", options->file, "T1 space file (JSON)")->required();
  cmd->add_option("--list", options->list, "Also print the first N configurations")
      ->transform(unsigned_in(0, std::uint64_t{1} << 40));
  cmd->add_flag("--json", options->json, "Write the result as JSON");
  cmd->callback([options] { run_space(*options); });
}

}  // namespace tunekit::cli
