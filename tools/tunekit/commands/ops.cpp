// tunekit ops [--backend cpu|opencl|cuda] [--json]: every built-in op of every backend, its key
// fields, its space size and its default.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/backend.hpp"
#include "commands/commands.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/value_json.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct OpsOptions {
  bool json = false;
  std::string backend;  // empty: every backend
};

// What `ops` shows of one op, whatever its backend.
struct OpView {
  std::string backend;
  std::string name;
  std::string description;
  std::string example_shape;
  const std::vector<KeyField>* key_schema = nullptr;
  int schema_version = 0;
  std::size_t space_size = 0;
  std::string default_candidate;  // for the example shape
  std::vector<std::string> parameters;
};

std::string range_text(const KeyField& field) {
  if (field.type != Value::Type::integer) return "";
  return fmt::format("{}..{}", field.min, field.max);
}

void print_text(const OpView& op) {
  std::cout << fmt::format("{}  [{}]  ({} candidates{})\n", op.name, op.backend, op.space_size,
                           op.parameters.empty() ? "" : ", a space");
  if (!op.description.empty()) std::cout << "  " << op.description << '\n';
  if (!op.parameters.empty()) {
    std::string list;
    for (const std::string& p : op.parameters) list += (list.empty() ? "" : ", ") + p;
    std::cout << "  parameters: " << list << '\n';
  }
  if (!op.default_candidate.empty()) std::cout << "  default: " << op.default_candidate << '\n';
  if (op.key_schema && !op.key_schema->empty()) {
    std::cout << "  key fields:\n";
    for (const KeyField& f : *op.key_schema) {
      const std::string fallback = f.default_value
                                       ? fmt::format("default {}", f.default_value->text())
                                       : std::string("required");
      std::cout << fmt::format("    {:<8} {:<8} {:<16} {:<18} {}\n", f.name, to_string(f.type),
                               fallback, range_text(f), f.description);
    }
  }
  std::cout << fmt::format("  example: tunekit tune {} {}--shape {}\n\n", op.name,
                           op.backend == "cpu" ? "" : "--backend " + op.backend + " ",
                           op.example_shape);
}

Json entry_json(const OpView& op) {
  Json key = Json::array();
  if (op.key_schema) {
    for (const KeyField& f : *op.key_schema) {
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
  }
  Json j;
  j["backend"] = op.backend;
  j["name"] = op.name;
  j["description"] = op.description;
  j["schema_version"] = op.schema_version;
  j["space_size"] = op.space_size;
  j["candidates"] = op.space_size;  // kept for readers of the older listing
  j["parameters"] = op.parameters;
  j["default"] = op.default_candidate;
  j["key"] = std::move(key);
  j["example_shape"] = op.example_shape;
  return j;
}

OpView view_of(std::string backend, std::string name, std::string description,
               std::string example_shape, const OpBase& op) {
  OpView v;
  v.backend = std::move(backend);
  v.name = std::move(name);
  v.description = std::move(description);
  v.example_shape = std::move(example_shape);
  v.key_schema = &op.key_schema();
  v.schema_version = op.schema_version();
  v.space_size = op.size();
  if (op.space())
    for (const Parameter& p : op.space()->parameters()) v.parameters.push_back(p.name);
  try {
    v.default_candidate = op.candidate(op.default_index(op.parse_shape(v.example_shape))).name;
  } catch (const UsageError&) {
    v.default_candidate = "(depends on the key)";
  }
  return v;
}

void run_ops(const OpsOptions& options) {
  // An unknown --backend is refused before anything is listed.
  std::vector<const BackendEntry*> shown;
  if (options.backend.empty()) {
    for (const BackendEntry& b : backends()) shown.push_back(&b);
  } else {
    shown.push_back(&find_backend(options.backend));
  }
  Json all = Json::array();
  cpu::ThreadPool pool(0);
  for (const BackendEntry* backend : shown) {
    // Device backends' ops are described without a device: their spaces and key fields do not
    // depend on one (the candidates are checked against the device when they run).
    for (const CatalogEntry& entry : backend->ops()) {
      const std::unique_ptr<OpBase> op = entry.make(pool);
      const OpView v =
          view_of(backend->name, entry.name, entry.description, entry.example_shape, *op);
      if (options.json) {
        all.push_back(entry_json(v));
      } else {
        print_text(v);
      }
    }
  }
  if (options.json) std::cout << all.dump(2) << '\n';
}

}  // namespace

void register_ops(CLI::App& app) {
  auto options = std::make_shared<OpsOptions>();
  CLI::App* ops = app.add_subcommand(
      "ops", "List the built-in ops of every backend: key fields, space size, default");
  ops->add_flag("--json", options->json, "Write the list as JSON");
  ops->add_option("--backend", options->backend, "Only this backend's ops: cpu | opencl | cuda");
  ops->callback([options] { run_ops(*options); });
}

}  // namespace tunekit::cli
