// kernels/cuda (no GPU needed): the CUDA ops are spaces with valid defaults and sane points
// (threads, shared memory, register tiles, padding), sgemm's cuBLAS points are its anchors,
// the catalog finds the four ops by name, and NVRTC compiles a seeded random sample of every
// space's points (plus the corners) for sm_80 and sm_90 exactly as the build step does.
// bench/cuda_compile_all.cpp compiles every point.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cu_ops.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/cuda_catalog.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels::cu {
namespace {

// How many random points of each space each architecture compiles (besides the corners): the
// whole test stays within about a minute on two cores.
constexpr std::size_t kSampled = 40;
constexpr std::size_t kSampledSmall = 20;  // softmax, rmsnorm, conv2d (small kernels, small spaces)
const std::vector<std::string> kArchs{"sm_80", "sm_90"};

Config with(Config c, std::string_view changes) {
  const Config parsed = Config::parse(changes);  // kept: fields() refers into it
  for (const Field& f : parsed.fields()) c.set(f.name, f.value);
  return c;
}

std::int64_t at(const Config& c, const char* name) {
  return c[name].as_int();
}

// The largest tiles, widest vectors, both stage counts, both warp arrangements, the skinny
// tiles and split-k.
std::vector<Config> sgemm_corners() {
  const Config d = sgemm_default_config();
  return {
      d,
      with(d, "BM=128,BN=256,WM=64,WN=64,TM=8,TN=8,WTN=8,BK=8,VW=4,STAGES=2"),
      with(d, "BM=256,BN=128,WM=64,WN=64,TM=8,TN=8,WTN=8,BK=8,VW=4,STAGES=2"),
      with(d, "BM=128,BN=128,WM=64,WN=32,TM=8,TN=4,WTN=4,BK=16,VW=4,STAGES=2,SPLITK=4"),
      with(d, "BM=16,BN=64,WM=16,WN=64,TM=4,TN=4,WTN=8,BK=8,VW=4,STAGES=2"),
      with(d, "BM=16,BN=32,WM=16,WN=32,TM=4,TN=4,WTN=8,BK=16,VW=2,STAGES=1,SPLITK=2"),
      with(d, "BM=32,BN=32,WM=8,WN=16,TM=2,TN=2,WTN=8,BK=16,VW=2,STAGES=2"),
  };
}

TEST(CudaSpaces, Sizes) {
  const Enumeration sgemm = sgemm_space().enumerate();
  EXPECT_EQ(sgemm.size(), 33120u);  // 11038 tile kernels x SPLITK 1, 2, 4, and 6 cuBLAS points
  EXPECT_GE(sgemm.size(), 5000u);   // a few thousand tile points, times three split-k settings
  EXPECT_EQ(softmax_space().enumerate().size(), 120u);
  EXPECT_EQ(rmsnorm_space().enumerate().size(), 60u);
  EXPECT_EQ(conv2d_space().enumerate().size(), 60u);
}

TEST(CudaSpaces, TheDefaultsAndCornersAreValidPoints) {
  EXPECT_TRUE(sgemm_space().valid(sgemm_default_config()));
  for (const Config& c : sgemm_corners()) EXPECT_TRUE(sgemm_space().valid(c)) << c.text();
  EXPECT_TRUE(softmax_space().valid(softmax_default_config()));
  EXPECT_TRUE(rmsnorm_space().valid(rmsnorm_default_config()));
  EXPECT_TRUE(conv2d_space().valid(conv2d_default_config()));
  // Tile parameters are pinned to 0 for cuBLAS and set for tiles; split-k is a tile's.
  const Config d = sgemm_default_config();
  EXPECT_FALSE(sgemm_space().valid(with(d, "impl=cublas,algo=sgemm")));
  EXPECT_FALSE(sgemm_space().valid(with(d, "algo=sgemm")));
  EXPECT_FALSE(sgemm_space().valid(with(d, "WM=128")));      // BM % WM != 0
  EXPECT_FALSE(sgemm_space().valid(with(d, "TM=8,WM=16")));  // WM % (4 * TM) != 0
  EXPECT_FALSE(
      softmax_space().valid(Config{{"TPR", 1024}, {"RPB", 2}, {"VW", 1}, {"EXP", "expf"}}));
}

TEST(CudaSpaces, EverySgemmTilePointIsSane) {
  const Enumeration points = sgemm_space().enumerate();
  std::size_t tiles = 0, blas = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Config c = points.config(i);
    if (c["impl"].as_string() == "cublas") {
      ++blas;
      continue;
    }
    ++tiles;
    const std::int64_t bm = at(c, "BM"), bn = at(c, "BN"), bk = at(c, "BK");
    const std::int64_t threads = 32 * (bm / at(c, "WM")) * (bn / at(c, "WN"));
    ASSERT_GE(threads, 32) << c.text();
    ASSERT_LE(threads, 512) << c.text();
    ASSERT_LE(at(c, "STAGES") * bk * (bm + 4 + bn) * 4, 48 * 1024) << c.text();  // static smem
    ASSERT_LE(at(c, "WM") * at(c, "WN") / 32, 128) << c.text();  // accumulators per thread
    // Every thread loads whole vectors, and the padding covers every tile.
    ASSERT_EQ(bm * bk % (at(c, "VW") * threads), 0) << c.text();
    ASSERT_EQ(bk * bn % (at(c, "VW") * threads), 0) << c.text();
    ASSERT_LE((bm + bn) * bk / (at(c, "VW") * threads), 16) << c.text();  // loads per thread
    ASSERT_EQ(static_cast<std::int64_t>(kSgemmPadMN) % bm, 0) << c.text();
    ASSERT_EQ(static_cast<std::int64_t>(kSgemmPadMN) % bn, 0) << c.text();
    ASSERT_EQ(static_cast<std::int64_t>(kSgemmPadK) % bk, 0) << c.text();
    ASSERT_LE(at(c, "SPLITK"), kSgemmMaxSplitK) << c.text();
  }
  EXPECT_EQ(blas, sgemm_cublas_configs().size());
  EXPECT_GT(tiles, 5000u);
}

TEST(CudaSpaces, TheOpsAreSpacesWithValidDefaultsAndNoContextNeededToList) {
  cpu::ThreadPool pool(1);
  for (const cuda::CatalogEntry& entry : cuda::builtin_ops()) {
    auto op = entry.make(nullptr, pool);
    ASSERT_NE(op->space(), nullptr) << entry.name;
    EXPECT_EQ(op->size(), entry.space().enumerate().size()) << entry.name;
    const Key key = op->parse_shape(entry.example_shape);
    const Candidate c = op->candidate(op->default_index(key));
    EXPECT_EQ(op->find(c.name), op->default_index(key)) << entry.name;
    // Made without a context: building or making inputs says what to do.
    EXPECT_THROW(op->make_workload(key), UsageError) << entry.name;
  }
}

TEST(CudaSpaces, SgemmNumericsAnchorsAndEligibility) {
  cpu::ThreadPool pool(1);
  auto op = make_sgemm_op(nullptr, pool);
  const Key small = op->parse_shape("m=67,n=45,k=300");
  const Candidate def = op->candidate(op->default_index(small));
  EXPECT_EQ(def.config, sgemm_default_config());
  EXPECT_EQ(def.numerics, Numerics::bitwise);
  const std::vector<std::size_t> anchors = op->anchor_indices();
  ASSERT_EQ(anchors.size(), sgemm_cublas_configs().size());
  for (std::size_t i = 0; i < anchors.size(); ++i) {
    EXPECT_EQ(op->candidate(anchors[i]).config, sgemm_cublas_configs()[i]);
    EXPECT_EQ(op->candidate(anchors[i]).numerics, Numerics::reassociates);
    EXPECT_FALSE(sgemm_recipe(sgemm_cublas_configs()[i]).has_value());  // nothing to compile
  }
  const Config split = with(sgemm_default_config(), "SPLITK=2");
  const Candidate splitk = op->candidate(*op->find(split.text()));
  EXPECT_EQ(splitk.numerics, Numerics::reassociates);
  // Split-k serves small results with K enough (BK 8: 38 K tiles); it declines a big result
  // (no partial buffers) and a K of fewer than two tiles per split (K 24 is padded to 4 tiles).
  ASSERT_TRUE(splitk.eligible);
  EXPECT_EQ(splitk.eligible(small), std::nullopt);
  EXPECT_NE(splitk.eligible(op->parse_shape("m=4097,n=4096,k=4096")), std::nullopt);
  EXPECT_EQ(splitk.eligible(op->parse_shape("m=64,n=64,k=24")), std::nullopt);
  const Candidate split4 =
      op->candidate(*op->find(with(sgemm_default_config(), "SPLITK=4").text()));
  EXPECT_NE(split4.eligible(op->parse_shape("m=64,n=64,k=24")), std::nullopt);
  EXPECT_EQ(def.eligible ? def.eligible(op->parse_shape("m=8192,n=8192,k=1")) : std::nullopt,
            std::nullopt);
  // SPLITK changes the launch, not the kernel.
  EXPECT_EQ(sgemm_options(split), sgemm_options(sgemm_default_config()));
}

TEST(CudaCatalog, ListsTheFourOpsAndNamesThemForAnUnknownOne) {
  std::vector<std::string> names;
  for (const cuda::CatalogEntry& e : cuda::builtin_ops()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sgemm", "softmax", "rmsnorm", "conv2d"}));
  EXPECT_EQ(cuda::find_builtin_op("conv2d").name, "conv2d");
  try {
    cuda::find_builtin_op("nope");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'nope'"), std::string::npos) << what;
    EXPECT_NE(what.find("sgemm, softmax, rmsnorm, conv2d"), std::string::npos) << what;
  }
}

// Compiles every recipe for both architectures on two threads; returns the failures.
std::vector<std::string> compile_all(const std::vector<KernelRecipe>& recipes) {
  auto compiler = cuda::nvrtc_compiler();
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  auto work = [&] {
    for (std::size_t i; (i = next++) < recipes.size() * kArchs.size();) {
      const KernelRecipe& r = recipes[i / kArchs.size()];
      const std::string& arch = kArchs[i % kArchs.size()];
      std::string options;
      for (const std::string& o : r.options) options += o + " ";
      try {
        const cuda::ModuleImage image = compiler->compile(r.source, r.options, arch);
        if (image.binary.empty()) throw TrialError(Status::compile_failed, "empty cubin");
      } catch (const TrialError& e) {
        std::lock_guard lock(mutex);
        failures.push_back(arch + " " + options + ": " + e.what());
      }
    }
  };
  std::thread other(work);
  work();
  other.join();
  return failures;
}

// `count` seeded random points of `space` plus `corners`, as recipes.
template <class Recipe>
std::vector<KernelRecipe> sample(const Space& space, const std::vector<Config>& corners,
                                 std::size_t count, std::uint64_t seed, Recipe recipe) {
  const Enumeration points = space.enumerate();
  std::vector<KernelRecipe> out;
  for (const Config& c : corners)
    if (auto r = recipe(c)) out.push_back(std::move(*r));
  Rng rng(seed);
  for (const std::size_t i : points.sample(std::min(count, points.size()), rng))
    if (auto r = recipe(points.config(i))) out.push_back(std::move(*r));
  return out;
}

void expect_compiles(const std::vector<KernelRecipe>& recipes, std::size_t at_least) {
  EXPECT_GE(recipes.size(), at_least);
  for (const std::string& f : compile_all(recipes)) ADD_FAILURE() << f;
}

TEST(CudaSpaceCompile, SgemmSampleCompilesForSm80AndSm90) {
  // cuBLAS points compile nothing (sgemm_recipe is empty for them): about 46 kernels.
  expect_compiles(sample(sgemm_space(), sgemm_corners(), kSampled, 20251202, sgemm_recipe), 44);
}

TEST(CudaSpaceCompile, SoftmaxSampleCompilesForSm80AndSm90) {
  const Config d = softmax_default_config();
  expect_compiles(
      sample(softmax_space(),
             {d, with(d, "TPR=1024,VW=4,EXP=__expf"), with(d, "TPR=32,RPB=16,VW=2")}, kSampledSmall,
             7, [](const Config& c) { return std::optional(softmax_recipe(c)); }),
      kSampledSmall + 3);
}

TEST(CudaSpaceCompile, RmsnormSampleCompilesForSm80AndSm90) {
  const Config d = rmsnorm_default_config();
  expect_compiles(
      sample(rmsnorm_space(), {d, with(d, "TPR=1024,VW=4"), with(d, "TPR=32,RPB=16")},
             kSampledSmall, 8, [](const Config& c) { return std::optional(rmsnorm_recipe(c)); }),
      kSampledSmall + 3);
}

TEST(CudaSpaceCompile, Conv2dSampleCompilesForSm80AndSm90) {
  const Config d = conv2d_default_config();
  // The largest shared tile (SL=1 with a 17 x 17 filter) and a non-square filter.
  const Config big = with(d, "BX=32,BY=8,TX=4,TY=1,SL=1");
  std::vector<KernelRecipe> recipes{conv2d_recipe(big, 17, 17), conv2d_recipe(d, 5, 3)};
  for (KernelRecipe& r : sample(conv2d_space(), {}, kSampledSmall, 9, [](const Config& c) {
         return std::optional(conv2d_recipe(c, 5, 5));
       }))
    recipes.push_back(std::move(r));
  expect_compiles(recipes, kSampledSmall + 2);
}

}  // namespace
}  // namespace tunekit::kernels::cu
