// tunekit ops [--json]
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/value_json.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct OpsOptions {
  bool json = false;
};

std::string range_text(const KeyField& field) {
  if (field.type != Value::Type::integer) return "";
  return fmt::format("{}..{}", field.min, field.max);
}

void print_text(const CatalogEntry& entry, const OpBase& op) {
  std::cout << fmt::format("{}  ({} candidates)\n", entry.name, op.candidates().size());
  if (!entry.description.empty()) std::cout << "  " << entry.description << '\n';
  if (!op.key_schema().empty()) {
    std::cout << "  key fields:\n";
    for (const KeyField& f : op.key_schema()) {
      const std::string fallback = f.default_value
                                       ? fmt::format("default {}", f.default_value->text())
                                       : std::string("required");
      std::cout << fmt::format("    {:<8} {:<8} {:<16} {:<18} {}\n", f.name, to_string(f.type),
                               fallback, range_text(f), f.description);
    }
  }
  std::cout << fmt::format("  example: tunekit tune {} --shape {}\n\n", entry.name,
                           entry.example_shape);
}

Json entry_json(const CatalogEntry& entry, const OpBase& op) {
  Json key = Json::array();
  for (const KeyField& f : op.key_schema()) {
    Json field;
    field["name"] = f.name;
    field["type"] = std::string(to_string(f.type));
    field["description"] = f.description;
    field["default"] = f.default_value ? value_json(*f.default_value) : Json(nullptr);
    if (f.type == Value::Type::integer) {
      field["min"] = f.min;
      field["max"] = f.max;
    }
    key.push_back(std::move(field));
  }
  Json j;
  j["name"] = entry.name;
  j["description"] = entry.description;
  j["schema_version"] = op.schema_version();
  j["candidates"] = op.candidates().size();
  j["key"] = std::move(key);
  j["example_shape"] = entry.example_shape;
  return j;
}

void run_ops(const OpsOptions& options) {
  cpu::ThreadPool pool(0);
  Json all = Json::array();
  for (const CatalogEntry& entry : builtin_ops()) {
    const std::unique_ptr<OpBase> op = entry.make(pool);
    if (options.json) {
      all.push_back(entry_json(entry, *op));
    } else {
      print_text(entry, *op);
    }
  }
  if (options.json) std::cout << all.dump(2) << '\n';
}

}  // namespace

void register_ops(CLI::App& app) {
  auto options = std::make_shared<OpsOptions>();
  CLI::App* ops = app.add_subcommand("ops", "List the built-in ops: key fields, candidates");
  ops->add_flag("--json", options->json, "Write the list as JSON");
  ops->callback([options] { run_ops(*options); });
}

}  // namespace tunekit::cli
