// tunekit strategies [--json]: the search strategies and schedules `tune` and `replay` take,
// with their options.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

void show(const char* kind, const std::vector<PluginDescription>& list, Json* json) {
  if (json) {
    Json& out = (*json)[kind];
    out = Json::array();
    for (const PluginDescription& p : list)
      out.push_back({{"name", p.name}, {"description", p.description}, {"options", p.options}});
    return;
  }
  std::cout << kind << ":\n";
  for (const PluginDescription& p : list) {
    std::cout << fmt::format("  {:<12} {}\n", p.name, p.description);
    if (p.options != "none") std::cout << fmt::format("  {:<12} options: {}\n", "", p.options);
  }
  std::cout << '\n';
}

}  // namespace

void register_strategies(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "strategies", "List the search strategies (--strategy) and schedules (--schedule)");
  cmd->add_flag("--json", *json, "Write the lists as JSON");
  cmd->callback([json] {
    Json j;
    show("strategies", StrategyRegistry::builtin().describe(), *json ? &j : nullptr);
    show("schedules", builtin_schedules(), *json ? &j : nullptr);
    if (*json) {
      std::cout << j.dump(2) << '\n';
    } else {
      std::cout << fmt::format(
          "Write a spec as name:key=value,... e.g. --strategy genetic:pop=20 --schedule "
          "racing:round=4; the default strategy is {}.\n",
          kDefaultStrategy);
    }
  });
}

}  // namespace tunekit::cli
