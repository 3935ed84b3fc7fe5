// Artifacts (DESIGN §8): reviewed, deployable offline choices. One self-describing JSON file
// per (artifact name, key, device), named <name>-<identity digest>.json, written atomically.
//
//   {"format": "tunekit-artifact", "version": 1,
//    "identity": {"name": "sgemm", "key": "m=256,n=256,k=256",
//                 "device": {"product": "...", "arch": "x86_64", "compute_units": 2}},
//    "candidate": "blocked_4x16_...", "config": {"mc": 64, ...}, "evidence": [...]}
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct Artifact {
  std::string name;  // the artifact name: the op's name
  Key key;
  std::string product;
  std::string architecture;
  int compute_units = 0;
  std::string candidate;  // the chosen candidate's name
  Config config;          // its parameters, JSON types preserved
  // Every candidate's reading, and how the search ran (the stored choice's, see store.hpp).
  std::vector<CandidateReport> evidence;
  std::optional<SearchRecord> search;

  // Digest of (name, key, product, architecture, compute units): the file's name.
  Digest identity_digest() const;
  std::string file_name() const;  // "<name>-<digest hex>.json"
  std::string to_json() const;
  // A structurally invalid text is a ParseError saying what is wrong.
  static Artifact parse(std::string_view json);
};

// The artifact describing (op, key) on a device. UsageError when the device identity is
// unknown (an artifact must say which device it is for).
Artifact make_artifact(const OpBase& op, const Key& key, const DeviceIdentity& device,
                       std::string_view candidate, std::vector<CandidateReport> evidence = {},
                       std::optional<SearchRecord> search = {});

// The artifact for a stored choice (the CLI's `cache export`). ParseError when the entry's
// key text cannot be read; UsageError when its device identity has no product, or its
// winner's config text cannot be read.
Artifact artifact_from_stored(const StoredChoice& choice);

// Writes dir/<file_name()> atomically (a fresh O_EXCL temp file, mode 0600, fsync, rename;
// missing directories are created 0700); returns the path. UsageError for an unknown device, a
// name with a path separator or "..", an unwritable dir, or anything but a regular file at the
// target (a symlink, FIFO or device there is refused, never followed or replaced).
std::string write_artifact(const std::string& dir, const Artifact& artifact);

// The largest artifact file read (evidence of every candidate included); docs/formats.md.
inline constexpr std::size_t kArtifactMaxBytes = std::size_t{16} << 20;

// Reads and parses one artifact file: a regular file (or a symlink to one) of at most
// kArtifactMaxBytes; a FIFO, device or directory is refused without blocking. UsageError
// (ParseError for a malformed text) naming the file.
Artifact read_artifact(const std::filesystem::path& file);

// Why `artifact` must not be used for (op, key) on `device`, or nullopt when it may: it is
// for another op name, another key, or another device (product, architecture or compute
// units); it names a candidate the op lacks; or one of its config parameters disagrees with
// that candidate's declared config. Parameters named like a key field are ignored: the key
// wins. The reason reads as the end of "skipping artifact FILE: ...".
std::optional<std::string> check_artifact(const Artifact& artifact, const OpBase& op,
                                          const Key& key, const DeviceIdentity& device);

// The candidate an artifact in `dir` picks for (op, key) on `device`, or nullopt. A missing
// file is silent; an unreadable, malformed, mismatched (device, key, name) artifact, or one
// naming a candidate the op lacks or whose parameters disagree with it, is skipped with a
// warning naming the file. Parameters named like a key field are ignored: the key wins.
std::optional<std::size_t> find_artifact_choice(const std::string& dir, const OpBase& op,
                                                const Key& key, const DeviceIdentity& device,
                                                const WarningSink& warn);

}  // namespace tunekit
