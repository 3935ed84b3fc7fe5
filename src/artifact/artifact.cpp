#include "tunekit/artifact.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/safe_file.hpp"
#include "store/evidence_codec.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/terminal_text.hpp"
#include "tunekit/value_json.hpp"

namespace tunekit {
namespace {

using OrderedJson = nlohmann::ordered_json;
constexpr const char* kArtifactFormat = "tunekit-artifact";
constexpr int kArtifactVersion = 1;

void check_name(std::string_view name) {
  if (name.empty() || name.find('/') != name.npos || name.find('\\') != name.npos ||
      name.find("..") != name.npos || name.find('\0') != name.npos) {
    throw UsageError("artifact name '" + std::string(name) +
                     "' must be non-empty and hold no path separator or '..'");
  }
}

Value artifact_config_value(const OrderedJson& j, const std::string& where) {
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(static_cast<long long>(j.get<std::int64_t>()));
  if (j.is_number_float()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  throw ParseError(where + " must be a number, a string or a boolean", 0);
}

const OrderedJson& member(const OrderedJson& obj, const char* name, const std::string& where) {
  if (!obj.is_object() || !obj.contains(name))
    throw ParseError(where + " lacks \"" + name + "\"", 0);
  return obj.at(name);
}

std::string string_member(const OrderedJson& obj, const char* name, const std::string& where) {
  const OrderedJson& j = member(obj, name, where);
  if (!j.is_string()) throw ParseError(where + "." + name + " must be a string", 0);
  return j.get<std::string>();
}

}  // namespace

Digest Artifact::identity_digest() const {
  std::string enc = "tunekit-artifact-1;";
  const std::string key_encoding = key.encode();  // outlives the list below
  for (std::string_view part : {std::string_view(name), std::string_view(key_encoding),
                                std::string_view(product), std::string_view(architecture)}) {
    enc += std::to_string(part.size()) + ":" + std::string(part);
  }
  enc += std::to_string(compute_units);
  return Digest::of(enc);
}

std::string Artifact::file_name() const {
  check_name(name);
  return name + "-" + identity_digest().hex() + ".json";
}

std::string Artifact::to_json() const {
  OrderedJson j;
  j["format"] = kArtifactFormat;
  j["version"] = kArtifactVersion;
  j["identity"]["name"] = name;
  j["identity"]["key"] = key.text();
  j["identity"]["device"]["product"] = product;
  j["identity"]["device"]["arch"] = architecture;
  j["identity"]["device"]["compute_units"] = compute_units;
  j["candidate"] = candidate;
  j["config"] = OrderedJson::object();
  for (const Field& f : config.fields()) j["config"][f.name] = value_json(f.value);
  j["evidence"] = detail::evidence_json(evidence, search);
  return j.dump(2) + "\n";
}

Artifact Artifact::parse(std::string_view text) {
  OrderedJson j = OrderedJson::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ParseError("artifact is not valid JSON", 0);
  if (!j.is_object()) throw ParseError("artifact must be a JSON object", 0);
  if (string_member(j, "format", "artifact") != kArtifactFormat)
    throw ParseError("artifact format is not \"tunekit-artifact\"", 0);
  const OrderedJson& version = member(j, "version", "artifact");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kArtifactVersion)
    throw ParseError("artifact version must be " + std::to_string(kArtifactVersion), 0);
  Artifact a;
  const OrderedJson& id = member(j, "identity", "artifact");
  a.name = string_member(id, "name", "identity");
  check_name(a.name);
  try {
    a.key = Key::parse(string_member(id, "key", "identity"));
  } catch (const ParseError& e) {
    throw ParseError(std::string("identity.key: ") + e.what(), 0);
  }
  const OrderedJson& device = member(id, "device", "identity");
  a.product = string_member(device, "product", "identity.device");
  a.architecture = string_member(device, "arch", "identity.device");
  const OrderedJson& cu = member(device, "compute_units", "identity.device");
  if (!cu.is_number_integer() || cu.get<std::int64_t>() < 0 || cu.get<std::int64_t>() > 1 << 24)
    throw ParseError("identity.device.compute_units must be a non-negative integer", 0);
  a.compute_units = static_cast<int>(cu.get<std::int64_t>());
  a.candidate = string_member(j, "candidate", "artifact");
  const OrderedJson& config = member(j, "config", "artifact");
  if (!config.is_object()) throw ParseError("artifact.config must be an object", 0);
  for (const auto& [name, value] : config.items())
    a.config.set(name, artifact_config_value(value, "config." + name));
  if (j.contains("evidence")) {
    const OrderedJson& e = j["evidence"];
    const bool object_form =
        e.is_object() && e.contains("candidates") && e["candidates"].is_array();
    if (!e.is_array() && !object_form)
      throw ParseError("artifact.evidence must be an array or {\"candidates\": [...]}", 0);
    detail::DecodedEvidence evidence = detail::evidence_from_json(e);
    a.evidence = std::move(evidence.candidates);
    a.search = std::move(evidence.search);
  }
  return a;
}

Artifact make_artifact(const OpBase& op, const Key& key, const DeviceIdentity& device,
                       std::string_view candidate, std::vector<CandidateReport> evidence,
                       std::optional<SearchRecord> search) {
  if (!device.known) {
    throw UsageError(
        "cannot make an artifact: the device identity is unknown, so no one could tell which "
        "device the choice is for");
  }
  auto index = op.find(candidate);
  if (!index) {
    throw UsageError("op '" + op.name() + "' has no candidate '" + std::string(candidate) + "'");
  }
  Artifact a;
  a.name = op.name();
  check_name(a.name);
  a.key = key;
  a.product = device.product;
  a.architecture = device.architecture;
  a.compute_units = device.compute_units;
  a.candidate = std::string(candidate);
  a.config = op.candidate(*index).config;
  a.evidence = std::move(evidence);
  a.search = std::move(search);
  return a;
}

Artifact artifact_from_stored(const StoredChoice& choice) {
  Artifact a;
  a.name = choice.op;
  check_name(a.name);
  a.key = Key::parse(choice.key);  // ParseError: an unreadable key text
  a.product = choice.device.product;
  a.architecture = choice.device.architecture;
  a.compute_units = choice.device.compute_units;
  // A device column that is not a JSON object decodes to no product.
  if (a.product.empty()) throw UsageError("stored device identity has no product");
  a.candidate = choice.winner;
  try {
    a.config = Config::parse(choice.winner_config);
  } catch (const UsageError& e) {
    throw UsageError("stored winner config '" + choice.winner_config +
                     "' cannot be read: " + e.what());
  }
  a.evidence = choice.evidence;
  a.search = choice.search;
  return a;
}

std::string write_artifact(const std::string& dir, const Artifact& artifact) {
  if (artifact.product.empty()) {
    throw UsageError("cannot write an artifact without a device identity (product is empty)");
  }
  const std::string file = artifact.file_name();  // checks the name
  detail::make_private_directories(dir);
  const std::filesystem::path final_path = std::filesystem::path(dir) / file;
  detail::write_file_atomically(final_path, artifact.to_json(), "artifact");
  return final_path.string();
}

Artifact read_artifact(const std::filesystem::path& file) {
  const std::string text = detail::read_outside_file(file, kArtifactMaxBytes, "artifact");
  try {
    return Artifact::parse(text);
  } catch (const ParseError& e) {
    throw ParseError("artifact '" + file.string() + "': " + e.what(), e.position());
  }
}

std::optional<std::string> check_artifact(const Artifact& artifact, const OpBase& op,
                                          const Key& key, const DeviceIdentity& device) {
  if (artifact.name != op.name()) return "it is for op '" + artifact.name + "'";
  if (!(artifact.key == key)) return "it is for key " + artifact.key.text();
  if (artifact.product != device.product || artifact.architecture != device.architecture ||
      artifact.compute_units != device.compute_units) {
    return "it is for device '" + artifact.product + "' (" + artifact.architecture + ", " +
           std::to_string(artifact.compute_units) + " compute units)";
  }
  const auto index = op.find(artifact.candidate);
  if (!index) return "op '" + op.name() + "' has no candidate '" + artifact.candidate + "'";
  const Config declared = op.candidate(*index).config;
  for (const Field& f : artifact.config.fields()) {
    if (key.find(f.name)) continue;  // a key axis: the key wins
    const Value* mine = declared.find(f.name);
    if (!mine || !(*mine == f.value)) {
      return "parameter " + f.name + "=" + f.value.text() + " disagrees with candidate '" +
             artifact.candidate + "' (" + declared.text() + ")";
    }
  }
  return std::nullopt;
}

std::optional<std::size_t> find_artifact_choice(const std::string& dir, const OpBase& op,
                                                const Key& key, const DeviceIdentity& device,
                                                const WarningSink& warn) {
  if (dir.empty() || !device.known) return std::nullopt;
  Artifact wanted;
  wanted.name = op.name();
  wanted.key = key;
  wanted.product = device.product;
  wanted.architecture = device.architecture;
  wanted.compute_units = device.compute_units;
  std::string path;
  try {
    path = (std::filesystem::path(dir) / wanted.file_name()).string();
  } catch (const UsageError&) {
    return std::nullopt;  // an op name that cannot name a file has no artifacts
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  auto skip = [&](const std::string& why) -> std::optional<std::size_t> {
    // The reason quotes the file's own strings: escaped, so a planted artifact cannot drive
    // the terminal the warning is printed on.
    if (warn) warn(terminal_safe("skipping artifact " + path + ": " + why));
    return std::nullopt;
  };
  Artifact found;
  try {
    // Bounded and regular files only: a FIFO or a link to /dev/zero here must not stall tune.
    found = Artifact::parse(detail::read_outside_file(path, kArtifactMaxBytes, "artifact"));
  } catch (const UsageError& e) {
    return skip(e.what());
  }
  if (auto why = check_artifact(found, op, key, device)) return skip(*why);
  return op.find(found.candidate);
}

}  // namespace tunekit
