// The one encoding of stored evidence and identity parts (DESIGN §8): CandidateReport,
// TimingResult, SearchRecord, DeviceIdentity, Toolchain and EnvironmentTags to JSON and back.
// The SQLite store keeps them as JSON text columns, artifacts embed them, the JSON reporter
// writes candidates with them. Decoding is tolerant: a missing or mistyped field keeps its
// default, so entries written before a field existed still read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/identity.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

using CodecJson = nlohmann::ordered_json;

CodecJson timing_json(const TimingResult& timing);
CodecJson candidate_json(const CandidateReport& candidate);
CodecJson search_json(const SearchRecord& search);
TimingResult timing_from_json(const CodecJson& j);
CandidateReport candidate_from_json(const CodecJson& j, std::size_t position);
SearchRecord search_from_json(const CodecJson& j);

// {"search": {...}, "candidates": [...]} with a search record, else the bare candidates array
// (the form imports and artifacts without a search have always had). A scope other than
// "kernel" (a stack decision: operator, graph, application) is kept as "scope" in the object
// form; readers that predate it ignore the field.
CodecJson evidence_json(const std::vector<CandidateReport>& candidates,
                        const std::optional<SearchRecord>& search,
                        std::string_view scope = "kernel");
std::string evidence_text(const std::vector<CandidateReport>& candidates,
                          const std::optional<SearchRecord>& search,
                          std::string_view scope = "kernel");

struct DecodedEvidence {
  std::vector<CandidateReport> candidates;
  std::optional<SearchRecord> search;
  bool readable = true;  // false: neither {"candidates": [...]} nor an array (nothing decoded)
  std::string scope = "kernel";  // what the entry decides (no "scope" field: a kernel choice)
};
DecodedEvidence evidence_from_json(const CodecJson& j);
DecodedEvidence evidence_from_text(std::string_view text);

CodecJson device_object(const DeviceIdentity& device);
CodecJson toolchain_object(const Toolchain& toolchain);
CodecJson environment_object(const EnvironmentTags& tags);
// The same as compact JSON text, the form the store's columns keep.
std::string device_json(const DeviceIdentity& device);
std::string toolchain_json(const Toolchain& toolchain);
std::string environment_json(const EnvironmentTags& tags);
// `known` is true when the device names a product (the store does not keep the flag).
DeviceIdentity device_from_text(std::string_view text);
Toolchain toolchain_from_text(std::string_view text);
// Values that are not strings keep their JSON text; text that is not an object gives none.
EnvironmentTags environment_from_text(std::string_view text);

}  // namespace tunekit::detail
