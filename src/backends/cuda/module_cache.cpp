// The module cache (cuda.hpp's CachingCompiler). In memory: one entry per key, built once (the
// map's mutex is held only to find or insert an entry; each entry's own mutex is held across
// its one build, so different images compile concurrently and a second asker waits for the
// first). On disk: one file per key, "<key digest hex>.cubin", in a private directory:
// backends/cuda/cubin_file.hpp's format. Every field is checked on load; a file that fails a
// check is reported, rebuilt and replaced.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "backends/cuda/cubin_file.hpp"
#include "core/safe_file.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/key.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/store.hpp"

namespace tunekit::cuda {
namespace {

namespace fs = std::filesystem;

// Length-delimited, so that no two different (source, options, arch, version) tuples encode
// alike.
void append_field(std::string& out, std::string_view bytes) {
  out += std::to_string(bytes.size());
  out += ':';
  out += bytes;
}

Digest module_key(std::string_view source, const std::vector<std::string>& options,
                  const std::string& arch, const std::string& nvrtc) {
  std::string text = "tunekit-cuda-module/1;";
  append_field(text, source);
  text += std::to_string(options.size()) + ";";
  for (const std::string& o : options) append_field(text, o);
  append_field(text, arch);
  append_field(text, nvrtc);
  return Digest::of(text);
}

std::string quoted(const fs::path& path) {
  return "'" + path.string() + "'";
}

}  // namespace

struct CachingCompiler::Impl {
  struct Entry {
    std::mutex building;  // held across the build (or disk load) of this entry
    bool done = false;    // built, loaded, or failed with a classified error (remembered)
    std::optional<ModuleImage> image;
    Status status = Status::compile_failed;  // when done and image is empty
    std::string message;
  };
  std::unique_ptr<Compiler> inner;
  ModuleCacheOptions options;
  bool disk = false;  // options.directory is set and was accepted
  std::string nvrtc;  // part of every key: another NVRTC may emit another cubin
  std::mutex mutex;   // entries
  std::map<std::string, std::shared_ptr<Entry>> entries;
  std::atomic<std::size_t> memory_hits{0}, disk_hits{0};

  void warn(const std::string& message) const {
    if (options.on_warning) options.on_warning(message);
  }
  bool accept_directory();
  std::optional<ModuleImage> load(const Digest& key, const std::string& arch);
  void save(const Digest& key, const ModuleImage& image);
  fs::path file_of(const Digest& key) const { return options.directory / (key.hex() + ".cubin"); }
};

// Creates the directory 0700, or accepts an existing one only if it is a real directory no
// one else can write to (a directory others can write lets them plant the code tunekit runs).
bool CachingCompiler::Impl::accept_directory() {
  const fs::path& dir = options.directory;
  const std::string refused = "refusing the CUDA module cache directory " + quoted(dir) + ": ";
  const std::string memory = "; compiled modules stay in memory for this process";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      warn(refused + "it is " + detail::file_kind(st.st_mode) + ", not a directory" + memory);
      return false;
    }
  } else if (errno != ENOENT) {
    warn(refused + "it cannot be inspected: " + std::strerror(errno) + memory);
    return false;
  } else {
    try {
      detail::make_private_directories(dir);
    } catch (const UsageError& e) {
      warn(std::string(e.what()) + memory);
      return false;
    }
  }
  // The parent too: whoever can write there can swap the directory itself.
  for (const fs::path& p : {dir, dir.has_parent_path() ? dir.parent_path() : fs::path(".")}) {
    if (const detail::Trust trust = detail::directory_trust(p); !trust.trusted()) {
      warn(refused + trust.message + memory);
      return false;
    }
  }
  return true;
}

std::optional<ModuleImage> CachingCompiler::Impl::load(const Digest& key, const std::string& arch) {
  const fs::path path = file_of(key);
  const std::string skipped = "skipping the CUDA module cache file " + quoted(path) + ": ";
  const std::string rebuilt = "; rebuilding it";
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) warn(skipped + "it cannot be inspected: " + std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    // Never followed or opened (a FIFO would block, a device may act on open). In this
    // private directory only this user put it there; removing the name touches no target.
    warn(skipped + "it is " + detail::file_kind(st.st_mode) + ", not a regular file" + rebuilt);
    if (!S_ISDIR(st.st_mode)) ::unlink(path.c_str());
    return std::nullopt;
  }
  std::string bytes;
  try {
    bytes = detail::read_outside_file(path, detail::kMaxCubinFile, "CUDA module cache file");
  } catch (const UsageError& e) {
    warn(std::string(e.what()) + rebuilt);
    return std::nullopt;
  }
  std::string why;
  std::optional<ModuleImage> image = detail::decode_cubin_file(bytes, key, arch, why);
  if (!image) warn(skipped + why + rebuilt);
  return image;
}

void CachingCompiler::Impl::save(const Digest& key, const ModuleImage& image) {
  if (image.binary.size() > detail::kMaxCubinImage) {  // it would be refused on load
    warn("not writing the CUDA module cache file " + quoted(file_of(key)) + ": the image is " +
         std::to_string(image.binary.size()) + " bytes, over the cap of " +
         std::to_string(detail::kMaxCubinImage) + "; the module stays in memory for this process");
    return;
  }
  try {
    detail::write_file_atomically(file_of(key), detail::encode_cubin_file(key, image),
                                  "CUDA module cache file");
  } catch (const UsageError& e) {
    warn(std::string(e.what()) + "; the module stays in memory for this process");
  }
}

CachingCompiler::CachingCompiler(std::unique_ptr<Compiler> inner, ModuleCacheOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (!inner) throw UsageError("CachingCompiler needs a compiler to wrap (got none)");
  impl_->inner = std::move(inner);
  impl_->options = std::move(options);
  impl_->nvrtc = nvrtc_version();
  impl_->disk = !impl_->options.directory.empty() && impl_->accept_directory();
}

CachingCompiler::~CachingCompiler() = default;

ModuleImage CachingCompiler::compile(std::string_view source,
                                     const std::vector<std::string>& options,
                                     const std::string& arch) {
  const Digest key = module_key(source, options, arch, impl_->nvrtc);
  std::shared_ptr<Impl::Entry> entry;
  {
    std::lock_guard lock(impl_->mutex);
    auto [it, inserted] = impl_->entries.try_emplace(key.hex());
    if (inserted) it->second = std::make_shared<Impl::Entry>();
    entry = it->second;
  }
  std::lock_guard building(entry->building);  // waits while another thread builds this one
  if (entry->done) {
    ++impl_->memory_hits;
    if (entry->image) return *entry->image;
    throw TrialError(entry->status, entry->message);
  }
  if (impl_->disk) {
    if (std::optional<ModuleImage> image = impl_->load(key, arch)) {
      ++impl_->disk_hits;
      entry->image = std::move(image);
      entry->done = true;
      return *entry->image;
    }
  }
  try {
    entry->image = impl_->inner->compile(source, options, arch);
  } catch (const TrialError& e) {
    entry->status = e.status();
    entry->message = e.what();
    entry->done = true;
    throw;
  }  // anything else (fatal, bad_alloc) is not remembered: the next asker tries again
  entry->done = true;
  if (impl_->disk) impl_->save(key, *entry->image);
  return *entry->image;
}

BuildStats CachingCompiler::stats() const {
  BuildStats s = impl_->inner->stats();
  s.memory_hits = impl_->memory_hits.load();
  s.disk_hits = impl_->disk_hits.load();
  return s;
}

fs::path module_cache_directory(std::string_view store_spec) {
  const std::string file = store_file_of(store_spec);  // the one store-spec parser
  if (file.empty()) return {};
  return fs::path(file).parent_path() / "cuda-modules";
}

}  // namespace tunekit::cuda
