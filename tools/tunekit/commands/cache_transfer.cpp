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

void run_import(const CacheCommand& command) {
  std::error_code ec;
  if (!fs::is_directory(command.dir, ec)) {
    throw UsageError(fmt::format("cannot import from '{}': not a directory", command.dir));
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(command.dir, ec)) {
    const fs::path& p = entry.path();
    std::error_code file_ec;
    if (p.extension() == ".json" && p.filename().string().front() != '.' &&
        entry.is_regular_file(file_ec)) {
      files.push_back(p);
    }
  }
  if (ec) throw UsageError(fmt::format("cannot list '{}': {}", command.dir, ec.message()));
  std::sort(files.begin(), files.end());

  cpu::CpuDevice device;
  const DeviceIdentity& here = device.identity();
  if (!here.known) {
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
  // Identities are computed as `tune` computes them: a plain tuner (no tags, the default
  // numerics policy) on this device, ops built with the same thread pool.
  const TunerOptions plain;
  Tuner tuner(device, plain);
  cpu::ThreadPool pool(command.threads);
  std::map<std::string, std::unique_ptr<OpBase>> ops;

  std::size_t imported = 0;
  std::size_t skipped = 0;
  auto skip = [&](const fs::path& path, const std::string& why) {
    ++skipped;
    command.log.warn(fmt::format("skipping artifact {}: {}", path.string(), why));
  };
  for (const fs::path& path : files) {
    Artifact artifact;
    try {
      // Regular files only, size-capped: a FIFO or /dev/zero in the directory is skipped.
      artifact = read_artifact(path);
    } catch (const std::exception& e) {
      skip(path, terminal_safe(e.what()));
      continue;
    }
    auto& op = ops[artifact.name];
    if (!op) {
      try {
        op = find_builtin_op(artifact.name).make(pool);
      } catch (const UsageError& e) {
        ops.erase(artifact.name);
        skip(path, e.what());
        continue;
      }
    }
    Key key;
    try {
      key = op->parse_shape(artifact.key.text());  // defaults filled, fields ordered, checked
    } catch (const UsageError& e) {
      skip(path, fmt::format("its key {} does not fit op '{}': {}", artifact.key.text(), op->name(),
                             e.what()));
      continue;
    }
    artifact.key = key;  // checked as `tune` would look it up
    if (auto why = check_artifact(artifact, *op, key, here)) {
      skip(path, *why);
      continue;
    }
    const Candidate winner = op->candidate(*op->find(artifact.candidate));
    const StoredChoice c = make_stored_choice(tuner.identity(*op, key), winner.name,
                                              winner.config.text(), std::move(artifact.evidence),
                                              /*budget_cut=*/false, std::move(artifact.search));
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
