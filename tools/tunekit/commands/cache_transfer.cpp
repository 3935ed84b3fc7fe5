// tunekit cache export|import: move stored choices between machines as artifacts.
//
//   tunekit cache export --dir D [--op OP]
//   tunekit cache import D [--threads N]
//
// Registered with the other cache subcommands in cache.cpp.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "commands/cache_common.hpp"
#include "tunekit/artifact.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/store.hpp"
#include "tunekit/terminal_text.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli::cache_cmd {
namespace {

namespace fs = std::filesystem;

}  // namespace

// ---------------------------------------------------------------------------------------------
// export

void run_export(const CacheCommand& command) {
  const OpenedStore opened = open_cache_store(command, /*create=*/false);
  Store& store = require_existing(opened);
  const std::vector<StoredChoice> entries = store.list(command.op);
  if (entries.empty()) {
    command.log.warn(fmt::format("nothing to export: the store {} is empty{}", opened.spec,
                                 command.op.empty() ? "" : fmt::format(" for op {}", command.op)));
    return;
  }
  // Entries that differ only in what an artifact does not record (toolchain, environment
  // tags) map to one file: the newest wins.
  struct Planned {
    const StoredChoice* entry;
    Artifact artifact;
  };
  std::vector<Planned> planned;
  std::map<std::string, std::size_t> by_file;
  std::size_t failed = 0;
  for (const StoredChoice& c : entries) {
    try {
      Artifact artifact = artifact_from_stored(c);
      const std::string file = artifact.file_name();
      const auto [it, inserted] = by_file.try_emplace(file, planned.size());
      if (inserted) {
        planned.push_back({&c, std::move(artifact)});
        continue;
      }
      Planned& kept = planned[it->second];
      const StoredChoice* older = &c;
      if (c.created_at > kept.entry->created_at) {
        older = kept.entry;
        kept = {&c, std::move(artifact)};
      }
      command.log.info(fmt::format(
          "not exporting {} ({} {}): a newer stored choice for the same op, key and device is "
          "exported as {}",
          short_digest(older->identity_digest), older->op, older->key, file));
    } catch (const UsageError& e) {
      ++failed;
      command.log.warn(fmt::format("cannot export {} ({} {}): {}", short_digest(c.identity_digest),
                                   c.op, c.key, e.what()));
    }
  }
  std::size_t exported = 0;
  for (const Planned& p : planned) {
    try {
      std::cout << write_artifact(command.dir, p.artifact) << '\n';
      ++exported;
    } catch (const UsageError& e) {
      ++failed;
      command.log.warn(fmt::format("cannot export {} ({} {}): {}",
                                   short_digest(p.entry->identity_digest), p.entry->op,
                                   p.entry->key, e.what()));
    }
  }
  std::cout.flush();
  command.log.info(fmt::format("exported {} artifact{} to {}{}", exported, exported == 1 ? "" : "s",
                               command.dir,
                               failed ? fmt::format("; {} could not be exported", failed) : ""));
  if (exported == 0 && failed > 0)
    throw UsageError(fmt::format("nothing was exported from {}", opened.spec));
}

// ---------------------------------------------------------------------------------------------
// import

namespace {

// The *.json files of `dir` that are regular files and not hidden, sorted.
std::vector<fs::path> artifact_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("cannot import from '{}': not a directory", dir));
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& p = entry.path();
    std::error_code file_ec;
    if (p.extension() == ".json" && p.filename().string().front() != '.' &&
        entry.is_regular_file(file_ec)) {
      files.push_back(p);
    }
  }
  if (ec) throw UsageError(fmt::format("cannot list '{}': {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// Turns artifact files into stored choices for this machine, as `tune` would store them: the
// identity of a plain tuner (no tags, the default numerics policy) on this device, ops built
// with one thread pool.
class ArtifactImporter {
 public:
  ArtifactImporter(Device& device, int threads)
      : device_(device), tuner_(device, TunerOptions{}), pool_(threads) {}

  // The choice the file holds, or why it cannot be imported here.
  std::variant<StoredChoice, std::string> choice_from(const fs::path& path) {
    Artifact artifact;
    try {
      // Regular files only, size-capped: a FIFO or /dev/zero in the directory is skipped.
      artifact = read_artifact(path);
    } catch (const std::exception& e) {
      return terminal_safe(e.what());
    }
    const OpBase* op = nullptr;
    try {
      op = &op_named(artifact.name);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    Key key;
    try {
      key = op->parse_shape(artifact.key.text());  // defaults filled, fields ordered, checked
    } catch (const UsageError& e) {
      return fmt::format("its key {} does not fit op '{}': {}", artifact.key.text(), op->name(),
                         e.what());
    }
    artifact.key = key;  // checked as `tune` would look it up
    if (auto why = check_artifact(artifact, *op, key, device_.identity())) return *why;
    const Candidate winner = op->candidate(*op->find(artifact.candidate));
    return make_stored_choice(tuner_.identity(*op, key), winner.name, winner.config.text(),
                              std::move(artifact.evidence),
                              /*budget_cut=*/false, std::move(artifact.search));
  }

 private:
  const OpBase& op_named(const std::string& name) {
    auto& op = ops_[name];
    if (!op) {
      try {
        op = find_builtin_op(name).make(pool_);
      } catch (...) {
        ops_.erase(name);
        throw;
      }
    }
    return *op;
  }

  Device& device_;
  Tuner tuner_;
  cpu::ThreadPool pool_;
  std::map<std::string, std::unique_ptr<OpBase>> ops_;
};

}  // namespace

void run_import(const CacheCommand& command) {
  const std::vector<fs::path> files = artifact_files(command.dir);
  cpu::CpuDevice device;
  if (!device.identity().known) {
    throw UsageError(
        "cannot import: this machine's device identity could not be read, so tunekit neither "
        "stores nor serves choices here");
  }
  const OpenedStore opened = open_cache_store(command, /*create=*/true, /*write=*/true);
  Store& store = *opened.store;
  if (files.empty()) {
    std::cout << fmt::format("no *.json files in {}: nothing imported\n", command.dir);
    return;
  }
  ArtifactImporter importer(device, command.threads);
  std::size_t imported = 0;
  std::size_t skipped = 0;
  auto skip = [&](const fs::path& path, const std::string& why) {
    ++skipped;
    command.log.warn(fmt::format("skipping artifact {}: {}", path.string(), why));
  };
  for (const fs::path& path : files) {
    auto choice = importer.choice_from(path);
    if (const std::string* why = std::get_if<std::string>(&choice)) {
      skip(path, *why);
      continue;
    }
    const StoredChoice& c = std::get<StoredChoice>(choice);
    const bool replaced = store.find(c.identity_digest).has_value();
    store.put(c);
    const auto kept = store.find(c.identity_digest);
    if (!kept || kept->winner != c.winner) {
      skip(path, "the store did not keep it (see the warning above)");
      continue;
    }
    ++imported;
    std::cout << fmt::format("imported {}: {} {} -> {}{}\n", path.filename().string(), c.op, c.key,
                             c.winner, replaced ? " (replaced the stored choice)" : "");
  }
  std::cout << fmt::format("imported {}, skipped {} from {} into {}\n", imported, skipped,
                           command.dir, opened.spec);
  std::cout.flush();
  if (imported == 0 && skipped > 0)
    throw UsageError(fmt::format("nothing was imported from {}", command.dir));
}

}  // namespace tunekit::cli::cache_cmd
