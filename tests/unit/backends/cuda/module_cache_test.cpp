// module_cache.cpp: an image is compiled once per (source, options, arch) in memory and kept
// on disk for the next process; a cache file that is corrupt, foreign, or not a regular file
// is skipped with a warning naming it, rebuilt and replaced; the directory is private or
// refused; failures are remembered. Counted through a fake compiler: no NVRTC needed, but for
// the last test, which round-trips a real cubin.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fakes/hostile_files.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::cuda {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Counts compiles; a source containing "syntax error" fails as NVRTC would. The image spells
// out what it was compiled from, so a wrong answer is visible.
class CountingCompiler final : public Compiler {
 public:
  explicit CountingCompiler(std::atomic<int>& calls, std::chrono::milliseconds delay = {})
      : calls_(calls), delay_(delay) {}
  ModuleImage compile(std::string_view source, const std::vector<std::string>& options,
                      const std::string& arch) override {
    ++calls_;
    std::this_thread::sleep_for(delay_);
    if (source.find("syntax error") != std::string_view::npos)
      throw TrialError(Status::compile_failed, "error: expected a \";\" near 'syntax error'");
    std::string text =
        "\x7f"
        "ELF|" +
        arch + "|" + std::string(source);
    for (const std::string& o : options) text += "|" + o;
    return {arch, std::vector<char>(text.begin(), text.end()), "warning: fake"};
  }
  BuildStats stats() const override {
    BuildStats s;
    s.builds = static_cast<std::size_t>(calls_.load());
    return s;
  }

 private:
  std::atomic<int>& calls_;
  std::chrono::milliseconds delay_;
};

// Warnings a cache gave, thread-safe.
struct Warnings {
  std::mutex mutex;
  std::vector<std::string> list;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view w) {
      std::lock_guard lock(mutex);
      list.emplace_back(w);
    };
  }
  std::string all() {
    std::lock_guard lock(mutex);
    std::string out;
    for (const std::string& w : list) out += w + "\n";
    return out;
  }
};

std::unique_ptr<CachingCompiler> make_cache(std::atomic<int>& calls, const fs::path& dir,
                                            Warnings* warnings = nullptr) {
  ModuleCacheOptions options;
  options.directory = dir;
  if (warnings) options.on_warning = warnings->sink();
  return std::make_unique<CachingCompiler>(std::make_unique<CountingCompiler>(calls), options);
}

std::string text_of(const ModuleImage& image) {
  return std::string(image.binary.begin(), image.binary.end());
}

std::vector<fs::path> entries_of(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

constexpr const char* kSource = "__global__ void k(float* x) { x[0] = 1; }";

TEST(ModuleCache, SecondCompileOfTheSameRequestIsAMemoryHit) {
  std::atomic<int> calls{0};
  CachingCompiler cache(std::make_unique<CountingCompiler>(calls), {});
  const ModuleImage first = cache.compile(kSource, {"-DBM=64"}, "sm_90");
  const ModuleImage second = cache.compile(kSource, {"-DBM=64"}, "sm_90");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(text_of(second), text_of(first));
  EXPECT_EQ(second.log, "warning: fake");
  const BuildStats stats = cache.stats();
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.disk_hits, 0u);
}

TEST(ModuleCache, AnotherSourceOptionListOrArchCompilesAgain) {
  std::atomic<int> calls{0};
  CachingCompiler cache(std::make_unique<CountingCompiler>(calls), {});
  cache.compile(kSource, {"-DA=1"}, "sm_90");
  cache.compile(kSource, {"-DA=1"}, "sm_80");
  cache.compile(kSource, {"-DA=2"}, "sm_90");
  cache.compile(std::string(kSource) + " ", {"-DA=1"}, "sm_90");
  // Option boundaries are part of the key: {"-DA=1", "-DB"} is not {"-DA=1-DB"}.
  cache.compile(kSource, {"-DA=1", "-DB"}, "sm_90");
  cache.compile(kSource, {"-DA=1-DB"}, "sm_90");
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(cache.stats().memory_hits, 0u);
}

TEST(ModuleCache, ANewCacheOnTheSameDirectoryAnswersFromDisk) {
  TempDir tmp;
  const fs::path dir = tmp / "cuda-modules";
  std::atomic<int> first_calls{0}, second_calls{0};
  const std::string built = text_of(make_cache(first_calls, dir)->compile(kSource, {}, "sm_90"));
  ASSERT_EQ(first_calls, 1);
  ASSERT_EQ(entries_of(dir).size(), 1u);
  EXPECT_EQ(entries_of(dir)[0].extension(), ".cubin");

  Warnings warnings;
  auto cache = make_cache(second_calls, dir, &warnings);
  EXPECT_EQ(text_of(cache->compile(kSource, {}, "sm_90")), built);
  EXPECT_EQ(text_of(cache->compile(kSource, {}, "sm_90")), built);
  EXPECT_EQ(second_calls, 0);
  EXPECT_EQ(cache->stats().disk_hits, 1u);
  EXPECT_EQ(cache->stats().memory_hits, 1u);
  EXPECT_EQ(warnings.all(), "");
  // Another arch is another file.
  cache->compile(kSource, {}, "sm_80");
  EXPECT_EQ(second_calls, 1);
  EXPECT_EQ(entries_of(dir).size(), 2u);
}

TEST(ModuleCache, TheDirectoryIsCreatedPrivateAndFilesAreOwnerOnly) {
  TempDir tmp;
  const fs::path dir = tmp / "a" / "b" / "cuda-modules";
  std::atomic<int> calls{0};
  make_cache(calls, dir)->compile(kSource, {}, "sm_90");
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(tmp / "a"), 0700u);
  ASSERT_EQ(entries_of(dir).size(), 1u);  // no temp file left behind
  EXPECT_EQ(mode_of(entries_of(dir)[0]), 0600u);
}

TEST(ModuleCache, ADirectoryOthersCanWriteIsRefusedAndTheCacheStaysInMemory) {
  TempDir tmp;
  const fs::path dir = tmp / "cuda-modules";
  fs::create_directory(dir);
  ::chmod(dir.c_str(), 0777);
  Warnings warnings;
  std::atomic<int> calls{0};
  auto cache = make_cache(calls, dir, &warnings);
  EXPECT_NE(warnings.all().find("writable by others"), std::string::npos) << warnings.all();
  EXPECT_NE(warnings.all().find(dir.string()), std::string::npos) << warnings.all();
  cache->compile(kSource, {}, "sm_90");
  cache->compile(kSource, {}, "sm_90");
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(entries_of(dir).empty());
  EXPECT_EQ(mode_of(dir), 0777u);  // refused, not repaired behind the user's back
}

TEST(ModuleCache, ADirectoryThatIsASymlinkOrAFileIsRefused) {
  TempDir tmp;
  fs::create_directory(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "linked");
  tmp.write("a-file", "not a directory");
  for (const char* name : {"linked", "a-file"}) {
    Warnings warnings;
    std::atomic<int> calls{0};
    auto cache = make_cache(calls, tmp / name, &warnings);
    cache->compile(kSource, {}, "sm_90");
    EXPECT_NE(warnings.all().find("refusing the CUDA module cache directory"), std::string::npos)
        << name << ": " << warnings.all();
    EXPECT_EQ(calls, 1);
  }
  EXPECT_TRUE(entries_of(tmp / "elsewhere").empty());
  EXPECT_EQ(testing::file_text(tmp / "a-file"), "not a directory");
}

// How a cache file can go bad. Each is skipped with a warning naming the file, rebuilt, and
// the file is valid again afterwards (a third cache answers from it without a word).
struct Corruption {
  const char* name;
  const char* why;  // part of the expected warning
  std::function<void(const TempDir&, const fs::path&)> apply;
};

void edit_bytes(const fs::path& file, const std::function<void(std::string&)>& edit) {
  std::string bytes = testing::file_text(file);
  edit(bytes);
  fs::remove(file);
  std::ofstream(file, std::ios::binary) << bytes;
  ::chmod(file.c_str(), 0600);
}

std::vector<Corruption> corruptions() {
  return {
      {"a flipped image byte", "does not match the digest",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b.back() ^= 1; });
       }},
      {"a truncated file", "truncated",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b.resize(b.size() - 5); });
       }},
      {"a file cut inside its header", "no TKCUBIN1 header",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b.resize(20); });
       }},
      {"bytes appended", "truncated or extended",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b += "tail"; });
       }},
      {"another arch in the header", "it is for sm_80",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b.replace(b.find("sm_90"), 5, "sm_80"); });
       }},
      {"a wrong magic", "no TKCUBIN1 header",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b[0] = 'X'; });
       }},
      {"a huge declared size", "cap",
       [](const TempDir&, const fs::path& f) {
         edit_bytes(f, [](std::string& b) { b[31] = '\x7f'; });
       }},
      {"an empty file", "no TKCUBIN1 header",
       [](const TempDir&, const fs::path& f) { edit_bytes(f, [](std::string& b) { b.clear(); }); }},
      {"a FIFO", "a FIFO",
       [](const TempDir&, const fs::path& f) {
         fs::remove(f);
         ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
       }},
      {"a symlink to a valid copy", "a symbolic link",
       [](const TempDir& tmp, const fs::path& f) {
         fs::copy_file(f, tmp / "outside.cubin");
         fs::remove(f);
         fs::create_symlink(tmp / "outside.cubin", f);
       }},
      {"a device or socket", "not a regular file",
       [](const TempDir&, const fs::path& f) {
         fs::remove(f);
         ASSERT_TRUE(testing::make_special_file(f));
       }},
  };
}

TEST(ModuleCache, ACorruptOrForeignFileIsSkippedWithAWarningRebuiltAndReplaced) {
  for (const Corruption& c : corruptions()) {
    SCOPED_TRACE(c.name);
    TempDir tmp;
    const fs::path dir = tmp / "cuda-modules";
    std::atomic<int> calls{0};
    const std::string built = text_of(make_cache(calls, dir)->compile(kSource, {}, "sm_90"));
    ASSERT_EQ(entries_of(dir).size(), 1u);
    const fs::path file = entries_of(dir)[0];
    c.apply(tmp, file);
    const std::string outside = fs::exists(tmp / "outside.cubin")
                                    ? testing::file_text(tmp / "outside.cubin")
                                    : std::string();

    auto warnings = std::make_shared<Warnings>();
    std::string got;
    const std::string error = testing::error_within(std::chrono::seconds(10), [=, &calls, &got] {
      got = text_of(make_cache(calls, dir, warnings.get())->compile(kSource, {}, "sm_90"));
    });
    ASSERT_EQ(error, "");
    EXPECT_EQ(got, built);
    EXPECT_EQ(calls, 2) << "the bad file was not rebuilt";
    EXPECT_NE(warnings->all().find(file.string()), std::string::npos) << warnings->all();
    EXPECT_NE(warnings->all().find(c.why), std::string::npos) << warnings->all();

    // Replaced by a valid regular file; what a symlink pointed at is untouched.
    EXPECT_EQ(mode_of(file), 0600u);
    if (!outside.empty()) {
      EXPECT_EQ(testing::file_text(tmp / "outside.cubin"), outside);
    }
    Warnings quiet;
    auto third = make_cache(calls, dir, &quiet);
    EXPECT_EQ(text_of(third->compile(kSource, {}, "sm_90")), built);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(third->stats().disk_hits, 1u);
    EXPECT_EQ(quiet.all(), "");
  }
}

TEST(ModuleCache, AFileHoldingAnotherKeysImageIsRefused) {
  TempDir tmp;
  const fs::path dir = tmp / "cuda-modules";
  std::atomic<int> calls{0};
  make_cache(calls, dir)->compile(kSource, {"-DA=1"}, "sm_90");
  const fs::path a = entries_of(dir)[0];
  make_cache(calls, dir)->compile(kSource, {"-DA=2"}, "sm_90");
  fs::path b;
  for (const fs::path& p : entries_of(dir))
    if (p != a) b = p;
  fs::remove(b);
  fs::copy_file(a, b);  // b's name, a's content: a valid file, for another request

  Warnings warnings;
  auto cache = make_cache(calls, dir, &warnings);
  const std::string got = text_of(cache->compile(kSource, {"-DA=2"}, "sm_90"));
  EXPECT_NE(got.find("-DA=2"), std::string::npos) << got;
  EXPECT_EQ(calls, 3);
  EXPECT_NE(warnings.all().find("key digest"), std::string::npos) << warnings.all();
}

TEST(ModuleCache, AFailureIsRememberedAndNeverWritten) {
  TempDir tmp;
  const fs::path dir = tmp / "cuda-modules";
  std::atomic<int> calls{0};
  auto cache = make_cache(calls, dir);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      cache->compile("syntax error", {}, "sm_90");
      FAIL() << "a broken source compiled";
    } catch (const TrialError& e) {
      EXPECT_EQ(e.status(), Status::compile_failed);
      EXPECT_NE(std::string(e.what()).find("expected a \";\""), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache->stats().memory_hits, 1u);
  EXPECT_TRUE(entries_of(dir).empty());
}

TEST(ModuleCache, EightThreadsAskingTheSameImageCompileItOnce) {
  std::atomic<int> calls{0};
  CachingCompiler cache(std::make_unique<CountingCompiler>(calls, std::chrono::milliseconds(50)),
                        {});
  std::atomic<int> ready{0};
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready < 8) std::this_thread::yield();
      got[t] = text_of(cache.compile(kSource, {}, "sm_90"));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.stats().memory_hits, 7u);
  for (const std::string& g : got) EXPECT_EQ(g, got[0]);
}

// A directory squatting on the file's name cannot be removed or replaced: the write fails
// (as it would on a full or read-only disk), which is a warning; the image is still served.
TEST(ModuleCache, AWriteFailureIsAWarningAndTheImageStaysInMemory) {
  TempDir tmp;
  const fs::path dir = tmp / "cuda-modules";
  std::atomic<int> calls{0};
  make_cache(calls, dir)->compile(kSource, {}, "sm_90");
  const fs::path file = entries_of(dir)[0];
  fs::remove(file);
  fs::create_directory(file);

  Warnings warnings;
  auto cache = make_cache(calls, dir, &warnings);
  EXPECT_EQ(text_of(cache->compile(kSource, {}, "sm_90")).substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(warnings.all().find("write the CUDA module cache file"), std::string::npos)
      << warnings.all();
  EXPECT_NE(warnings.all().find("stays in memory"), std::string::npos) << warnings.all();
  EXPECT_NE(warnings.all().find(file.string()), std::string::npos) << warnings.all();
  cache->compile(kSource, {}, "sm_90");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache->stats().memory_hits, 1u);
  EXPECT_TRUE(fs::is_directory(file));
}

TEST(ModuleCache, ARealCubinRoundTripsThroughDisk) {
  if (nvrtc_version().empty()) GTEST_FAIL() << "NVRTC did not load";
  TempDir tmp;
  const fs::path dir = tmp / "cuda-modules";
  const std::string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 2; }";
  const ModuleImage built =
      CachingCompiler(nvrtc_compiler(), {dir, {}}).compile(source, {}, "sm_80");
  CachingCompiler again(nvrtc_compiler(), {dir, {}});
  const ModuleImage loaded = again.compile(source, {}, "sm_80");
  EXPECT_EQ(loaded.binary, built.binary);
  EXPECT_EQ(loaded.arch, "sm_80");
  EXPECT_EQ(again.stats().builds, 0u);
  EXPECT_EQ(again.stats().disk_hits, 1u);
}

TEST(ModuleCacheDirectory, IsBesideAnSqliteStoreAndNoneForOtherStores) {
  EXPECT_EQ(module_cache_directory("sqlite:/home/u/.cache/tunekit/choices.db"),
            fs::path("/home/u/.cache/tunekit/cuda-modules"));
  // A colon in the path belongs to the path (the spec's kind ends at the first one).
  EXPECT_EQ(module_cache_directory("sqlite:/data/a:b/choices.db"),
            fs::path("/data/a:b/cuda-modules"));
  EXPECT_EQ(module_cache_directory("sqlite:choices.db"), fs::path("cuda-modules"));
  EXPECT_EQ(module_cache_directory("none"), fs::path());
  EXPECT_EQ(module_cache_directory("memory"), fs::path());
  EXPECT_EQ(module_cache_directory("postgresql://user@host/db"), fs::path());
  EXPECT_THROW(module_cache_directory("bogus:/x"), UsageError);
  EXPECT_THROW(module_cache_directory("sqlite:"), UsageError);
}

}  // namespace
}  // namespace tunekit::cuda
