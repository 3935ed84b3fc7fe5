// Tests for kernels/sgemm/sgemm.cpp: the key schema refuses hostile sizes; the op is one space
// (its size, its conditional parameters, the default ikj); every algorithm validates against
// the reference at odd shapes (a seeded sample of the packed points, every OpenBLAS thread
// count); the packed kernels handle every edge (partial register tiles, cache blocks that do
// not divide the sizes); OpenBLAS launches from several threads at once stay correct; the
// reference is right.
#include "sgemm/sgemm.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fakes/thread_cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/space.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::kernels {
namespace {

// A space candidate is named by its config's text: the point of `algo` with the given
// parameters, the others pinned as the space pins them.
std::string point_name(std::string algo, int threads = 1) {
  Config config = sgemm_default_config();
  config.set("algo", std::move(algo)).set("threads", threads);
  return config.text();
}

TEST(Sgemm, RefusesHostileSizesBeforeAllocating) {
  cpu::ThreadPool pool(2);
  const auto op = make_sgemm_op_typed(pool);
  EXPECT_THROW(op->parse_shape("m=1000000000000,n=256,k=256"), UsageError);
  EXPECT_THROW(op->parse_shape("m=256,n=8193,k=256"), UsageError);
  EXPECT_THROW(op->parse_shape("m=256,n=256,k=0"), UsageError);
  EXPECT_THROW(op->parse_shape("m=256,n=256"), UsageError);  // k missing
  EXPECT_THROW(
      op->check_key(Key{{"m", std::int64_t{1} << 40}, {"n", 1}, {"k", 1}, {"dtype", "f32"}}),
      UsageError);
  // make_workload checks too, for a key that never went through check_key.
  EXPECT_THROW(op->make_workload(Key{{"m", std::int64_t{1} << 40}, {"n", 1}, {"k", 1}}),
               UsageError);
  EXPECT_THROW(op->make_workload(op->parse_shape("m=2,n=2,k=2,dtype=f64")), UsageError);
}

TEST(Sgemm, KeyOfArgsMatchesTheParsedShape) {
  cpu::ThreadPool pool(2);
  const auto op = make_sgemm_op_typed(pool);
  EXPECT_EQ(op->key_of(make_sgemm_args(3, 5, 7)), op->parse_shape("k=7,n=5,m=3"));
}

// The space: every micro-kernel × 4 MC × 4 KC × 4 NC × 2 loop orders × the pool's thread
// counts, plus one point each for ikj and naive and one per thread count for OpenBLAS.
TEST(Sgemm, OneSpaceOfEveryKernelAndTheLibrary) {
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    const auto typed = make_sgemm_op_typed(pool);
    const OpBase& op = *typed;
    ASSERT_NE(op.space(), nullptr);
    EXPECT_EQ(op.schema_version(), 2);
    std::size_t micros = 0;
    for (const SgemmMicro& micro : kSgemmMicros) micros += sgemm_native_lanes(micro.lanes);
    const std::size_t packed = micros * 4 * 4 * 4 * 2 * static_cast<std::size_t>(threads);
    EXPECT_EQ(op.size(), packed + 2 + static_cast<std::size_t>(threads)) << threads;
    std::map<std::string, std::size_t> per_algo;
    std::set<std::string> names;
    for (std::size_t i = 0; i < op.size(); ++i) {
      const Candidate c = op.candidate(i);
      const std::string& algo = c.config["algo"].as_string();
      ++per_algo[algo];
      EXPECT_TRUE(names.insert(c.name).second) << c.name;
      EXPECT_EQ(op.find(c.name), i) << c.name;
      EXPECT_EQ(c.preference, static_cast<int>(i));
      EXPECT_EQ(c.numerics, algo == "ikj" ? Numerics::bitwise : Numerics::reassociates) << c.name;
      const std::int64_t mr = c.config["mr"].as_int(), nr = c.config["nr"].as_int();
      const std::int64_t mc = c.config["mc"].as_int(), kc = c.config["kc"].as_int(),
                         nc = c.config["nc"].as_int();
      const std::string& order = c.config["order"].as_string();
      const std::int64_t t = c.config["threads"].as_int();
      EXPECT_GE(t, 1);
      EXPECT_LE(t, threads);
      if (algo == "packed") {
        bool supported = false;
        for (const SgemmMicro& micro : kSgemmMicros)
          supported =
              supported || (micro.mr == mr && micro.nr == nr && sgemm_native_lanes(micro.lanes));
        EXPECT_TRUE(supported) << c.name;
        EXPECT_EQ(mc % mr, 0) << c.name;
        EXPECT_EQ(nc % nr, 0) << c.name;
        EXPECT_GT(kc, 0) << c.name;
        EXPECT_NE(order, "none") << c.name;
      } else {
        // Irrelevant parameters are pinned: one point per meaningful setting.
        EXPECT_EQ(mr + nr + mc + kc + nc, 0) << c.name;
        EXPECT_EQ(order, "none") << c.name;
        if (algo != "openblas") {
          EXPECT_EQ(t, 1) << c.name;
        }
      }
    }
    EXPECT_EQ(per_algo["ikj"], 1u);
    EXPECT_EQ(per_algo["naive"], 1u);
    EXPECT_EQ(per_algo["openblas"], static_cast<std::size_t>(threads));
    EXPECT_EQ(per_algo["packed"], packed);
    // The default stays ikj, the first point.
    const std::size_t def = op.default_index(op.parse_shape("m=1,n=1,k=1"));
    EXPECT_EQ(def, 0u);
    EXPECT_EQ(op.candidate(def).name, point_name("ikj"));
    EXPECT_EQ(op.candidate(def).numerics, Numerics::bitwise);
  }
}

// A space's checksum covers its definition: a pool of another size is another space.
TEST(Sgemm, ChecksumFollowsTheThreadCounts) {
  cpu::ThreadPool one(1), two(2);
  EXPECT_NE(make_sgemm_op(one)->checksum(), make_sgemm_op(two)->checksum());
  EXPECT_EQ(make_sgemm_op(two)->checksum(), make_sgemm_op(two)->checksum());
}

TEST(Sgemm, ReferenceIsExactOnSmallIntegers) {
  cpu::ThreadPool pool(2);
  SgemmArgs args;
  args.m = 2;
  args.n = 2;
  args.k = 3;
  args.a = {1, 2, 3, 4, 5, 6};
  args.b = {7, 8, 9, 10, 11, 12};
  args.c.assign(4, std::numeric_limits<float>::quiet_NaN());
  sgemm_reference(pool, args);
  EXPECT_EQ(args.c, (std::vector<float>{58, 64, 139, 154}));
}

// Odd shapes: smaller than, straddling and past the register tiles (4-12 rows, 8-32 columns)
// and the cache blocks (MC 48-192, KC 128-512, NC 512-4096).
const char* const kOddShapes[] = {"m=1,n=1,k=1",    "m=7,n=33,k=1",     "m=33,n=7,k=257",
                                  "m=1,n=257,k=33", "m=65,n=129,k=300", "m=13,n=47,k=129",
                                  "m=50,n=600,k=9", "m=200,n=65,k=520"};

// Every algorithm through the op, as the tuner validates it (outputs poisoned, compared with
// the op's tolerance): ikj, naive, OpenBLAS at every thread count, and a seeded sample of the
// packed points with every micro-kernel and both loop orders among them.
TEST(Sgemm, EveryAlgorithmValidatesAtOddShapes) {
  cpu::ThreadPool pool(2);
  const auto typed = make_sgemm_op_typed(pool);
  const OpBase& op = *typed;
  std::vector<std::size_t> points;
  std::vector<std::size_t> packed;
  for (std::size_t i = 0; i < op.size(); ++i) {
    const std::string algo =
        op.candidate(i).config["algo"].as_string();  // a copy: candidate() is a value
    if (algo == "packed") {
      packed.push_back(i);
    } else {
      points.push_back(i);
    }
  }
  ASSERT_EQ(points.size(), 4u);  // ikj, naive, openblas t1, t2
  // The first point of each micro-kernel and loop order, then a seeded sample of the rest.
  std::set<std::string> seen;
  for (std::size_t i : packed) {
    const Config c = op.candidate(i).config;
    const std::string kind = c["mr"].text() + "x" + c["nr"].text() + c["order"].as_string();
    if (seen.insert(kind).second) points.push_back(i);
  }
  std::size_t micros = 0;
  for (const SgemmMicro& micro : kSgemmMicros) micros += sgemm_native_lanes(micro.lanes);
  EXPECT_EQ(seen.size(), micros * 2);
  Rng rng(20251201);
  std::shuffle(packed.begin(), packed.end(), rng);
  points.insert(points.end(), packed.begin(), packed.begin() + 48);

  for (const char* shape : kOddShapes) {
    const Key key = op.parse_shape(shape);
    const auto workload = op.make_workload(key);
    const Reference ref = Reference::capture(*workload, true, op.default_index(key));
    const Tolerance tolerance = op.tolerance(key);
    for (std::size_t i : points) {
      const Outcome outcome = ref.check(*workload, i, tolerance);
      EXPECT_TRUE(outcome.ok()) << op.candidate(i).name << " at " << shape << ": "
                                << outcome.message;
    }
  }
}

// The op's effective config (Op::effective_config) is a claim that points compute the same
// thing: a cache block at least as large as its dimension is the whole dimension. Every packed
// point is run; those the claim puts in one class must write the same bits, and the classes
// are as many as the rule says (mc 144/192, kc 256-512 and every nc are one at 100×70×130).
TEST(Sgemm, PointsOfOneEffectiveConfigComputeTheSameBits) {
  cpu::ThreadPool pool(2);
  const auto typed = make_sgemm_op_typed(pool);
  const OpBase& op = *typed;
  const Key key = op.parse_shape("m=100,n=70,k=130");
  const auto workload = op.make_workload(key);
  std::map<std::string, std::vector<float>> by_class;
  std::size_t others = 0;
  for (std::size_t i = 0; i < op.size(); ++i) {
    const Config c = op.candidate(i).config;
    if (c["algo"].as_string() != "packed") {
      ++others;
      continue;
    }
    Config effective = c;
    effective.set("mc", std::min<std::int64_t>(c["mc"].as_int(), 100))
        .set("kc", std::min<std::int64_t>(c["kc"].as_int(), 130))
        .set("nc", std::min<std::int64_t>(c["nc"].as_int(), 70));
    workload->run_candidate(i);
    const OutputView out = workload->outputs().front();
    const auto* data = static_cast<const float*>(out.data);
    std::vector<float> bits(data, data + out.count);
    const auto [it, fresh] = by_class.emplace(effective.text(), bits);
    if (!fresh) {
      EXPECT_EQ(std::memcmp(it->second.data(), bits.data(), bits.size() * sizeof(float)), 0)
          << c.text() << " differs from another point of " << effective.text();
    }
  }
  const std::vector<std::size_t> distinct = op.distinct_points(key, {});
  EXPECT_EQ(distinct.size(), by_class.size() + others);
  std::size_t micros = 0;
  for (const SgemmMicro& micro : kSgemmMicros) micros += sgemm_native_lanes(micro.lanes);
  // mc {48, 96, >=100} x kc {128, >=130} x nc {>=70} x 2 orders x 2 thread counts.
  EXPECT_EQ(by_class.size(), micros * 3 * 2 * 1 * 2 * 2);
  // At 128³ every kc and every nc is the whole dimension, and mc 144 and 192 are one.
  EXPECT_EQ(op.distinct_points(op.parse_shape("m=128,n=128,k=128"), {}).size(),
            micros * 3 * 2 * 2 + others);
  // Where every block is smaller than its dimension, every point computes differently.
  EXPECT_EQ(op.distinct_points(op.parse_shape("m=1024,n=4096,k=1024"), {}).size(), op.size());
}

// The library candidate at shapes past its small-matrix paths too, at each thread count.
TEST(Sgemm, OpenblasMatchesTheReference) {
  cpu::ThreadPool pool(2);
  EXPECT_FALSE(openblas_description().empty());
  const std::size_t shapes[][3] = {{1, 300, 77}, {129, 1, 65}, {257, 263, 269}};
  for (const auto& s : shapes) {
    SgemmArgs args = make_sgemm_args(s[0], s[1], s[2]);
    sgemm_reference(pool, args);
    const std::vector<float> want = args.c;
    for (int threads : {1, 2}) {
      args.c.assign(args.c.size(), std::numeric_limits<float>::quiet_NaN());
      sgemm_openblas(threads, args);
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(args.c[i], want[i], 1e-4) << "t" << threads << " element " << i;
    }
  }
  SgemmArgs args = make_sgemm_args(2, 2, 2);
  EXPECT_THROW(sgemm_openblas(0, args), std::invalid_argument);
}

// After openblas_quiesce the next threaded call starts OpenBLAS's helper again, often on the
// caller's CPU, where the two share a core until the scheduler moves one: the helper it
// started is spread off the caller's CPU. (It spins for ~0.1 s after the call, so its CPU is
// where it runs.) Without the spread 17-19 of 20 restarts leave it there on a 2-CPU VM; the
// scheduler of a loaded machine may move threads at any time: half of them, not all.
TEST(Sgemm, OpenblasThreadsStartedAgainAreSpreadOffTheCallersCpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this process may run on one CPU only";
  SgemmArgs args = make_sgemm_args(256, 256, 256);  // past OpenBLAS's single-thread sizes
  sgemm_openblas(2, args);
  int spread = 0, restarts = 0;
  for (int trial = 0; trial < 20; ++trial) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the tuner's other windows
    openblas_quiesce();
    const std::vector<int> before = cpu::thread_ids();
    sgemm_openblas(2, args);
    for (int call = 0; call < 20; ++call) sgemm_openblas(2, args);  // a window
    const int caller = ::sched_getcpu();
    std::vector<int> started;
    for (const int id : cpu::thread_ids())
      if (std::find(before.begin(), before.end(), id) == before.end()) started.push_back(id);
    if (started.empty()) continue;
    ++restarts;
    spread += std::all_of(started.begin(), started.end(),
                          [&](int id) { return testing::last_cpu(id) != caller; });
  }
  if (restarts == 0) GTEST_SKIP() << "this OpenBLAS starts no threads again (a serial build)";
  EXPECT_GE(spread * 2, restarts) << spread << " of " << restarts << " restarts";
}

// A fork stops OpenBLAS's threads too (its fork handler in the parent; the child has none), and
// a worker process's first threaded call starts them again, often on the caller's CPU: the op
// counts a fork as a stop, so the threads a forked child starts are spread like those after
// openblas_quiesce. Each child reports whether its started threads left the caller's CPU.
TEST(Sgemm, OpenblasThreadsStartedInAForkedChildAreSpread) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this process may run on one CPU only";
  cpu::ThreadPool pool(2);
  const auto op = make_sgemm_op_typed(pool);  // registers the op's fork handler
  SgemmArgs args = make_sgemm_args(256, 256, 256);
  sgemm_openblas(2, args);
  enum : int { kSpread = 10, kShared = 11, kNoThreads = 12 };
  int spread = 0, restarts = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // no gtest assertions here: the exit code is the answer
      const std::vector<int> before = cpu::thread_ids();
      for (int call = 0; call < 21; ++call) sgemm_openblas(2, args);
      const int caller = ::sched_getcpu();
      int code = kNoThreads;
      for (const int id : cpu::thread_ids()) {
        if (std::find(before.begin(), before.end(), id) != before.end()) continue;
        if (testing::last_cpu(id) == caller) code = kShared;
        if (code != kShared) code = kSpread;
      }
      ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit normally: " << status;
    const int code = WEXITSTATUS(status);
    ASSERT_TRUE(code == kSpread || code == kShared || code == kNoThreads) << code;
    if (code == kNoThreads) continue;
    ++restarts;
    spread += code == kSpread;
  }
  if (restarts == 0) GTEST_SKIP() << "this OpenBLAS starts no threads in a child (a serial build)";
  EXPECT_GE(spread * 2, restarts) << spread << " of " << restarts << " children";
}

// OpenBLAS's thread count is process-wide: launches of different thread counts from several
// threads at once are serialised and each still computes the right result.
TEST(Sgemm, ConcurrentOpenblasLaunchesStayCorrect) {
  cpu::ThreadPool pool(2);
  SgemmArgs shared = make_sgemm_args(96, 160, 200);
  sgemm_reference(pool, shared);
  const std::vector<float> want = shared.c;
  std::vector<int> bad(3, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&, t] {
      SgemmArgs args = make_sgemm_args(96, 160, 200);
      for (int rep = 0; rep < 20; ++rep) {
        args.c.assign(args.c.size(), std::numeric_limits<float>::quiet_NaN());
        sgemm_openblas(1 + (t + rep) % 2, args);
        for (std::size_t i = 0; i < want.size(); ++i)
          if (!(std::abs(args.c[i] - want[i]) <= 1e-4f)) ++bad[t];
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(bad, (std::vector<int>{0, 0, 0}));
}

// Every register block and loop order, with cache blocks smaller than, not multiples of and
// larger than the register tile, on sizes that leave partial tiles everywhere.
TEST(Sgemm, PackedEdgesMatchTheReference) {
  cpu::ThreadPool pool(2);
  const std::size_t blocks[][3] = {{1, 1, 8}, {5, 3, 9}, {13, 17, 40}, {96, 256, 2048}};
  const std::size_t shapes[][3] = {{1, 1, 1}, {9, 17, 5}, {23, 41, 37}};
  for (const auto& s : shapes) {
    SgemmArgs args = make_sgemm_args(s[0], s[1], s[2]);
    sgemm_reference(pool, args);
    const std::vector<float> want = args.c;
    for (const SgemmMicro& micro : kSgemmMicros) {
      for (const auto& block : blocks) {
        for (SgemmOrder order : {SgemmOrder::jpi, SgemmOrder::ijp}) {
          for (int threads : {1, 2}) {
            const SgemmPacked plan{micro.mr, micro.nr, block[0], block[1],
                                   block[2], order,    threads};
            args.c.assign(args.c.size(), std::numeric_limits<float>::quiet_NaN());
            sgemm_packed(plan, pool, args);
            for (std::size_t i = 0; i < want.size(); ++i) {
              ASSERT_NEAR(args.c[i], want[i], 1e-5)
                  << micro.mr << "x" << micro.nr << " mc=" << block[0] << " kc=" << block[1]
                  << " nc=" << block[2] << " " << to_string(order) << " t" << threads << " at "
                  << s[0] << "x" << s[1] << "x" << s[2] << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(Sgemm, NaiveDeclinesHugeProblems) {
  cpu::ThreadPool pool(1);
  const auto typed = make_sgemm_op_typed(pool);
  const OpBase& op = *typed;
  const auto naive = op.find(point_name("naive"));
  ASSERT_TRUE(naive);
  const Candidate c = op.candidate(*naive);
  ASSERT_TRUE(c.eligible);
  EXPECT_FALSE(c.eligible(op.parse_shape("m=1024,n=1024,k=1024")));
  EXPECT_TRUE(c.eligible(op.parse_shape("m=8192,n=8192,k=8192")));
  // eligible gives a reason to decline, none to serve: m·n·k up to 2^30 is served.
  EXPECT_FALSE(c.eligible(op.parse_shape("m=16,n=8192,k=8192")));  // 2^30
  EXPECT_TRUE(c.eligible(op.parse_shape("m=17,n=8192,k=8192")));
  // Nothing else declines.
  for (std::size_t i = 0; i < op.size(); ++i) {
    if (i == *naive) continue;
    const Candidate other = op.candidate(i);
    EXPECT_FALSE(other.eligible && other.eligible(op.parse_shape("m=8192,n=8192,k=8192")))
        << other.name;
  }
}

TEST(Sgemm, UnsupportedPlansAreRefused) {
  cpu::ThreadPool pool(1);
  SgemmArgs args = make_sgemm_args(4, 4, 4);
  EXPECT_THROW(sgemm_packed({5, 8, 48, 128, 512, SgemmOrder::jpi, 1}, pool, args),
               std::invalid_argument);
  EXPECT_THROW(sgemm_packed({12, 8, 48, 128, 512, SgemmOrder::jpi, 1}, pool, args),
               std::invalid_argument);
  EXPECT_THROW(sgemm_packed({4, 8, 0, 128, 512, SgemmOrder::jpi, 1}, pool, args),
               std::invalid_argument);
  EXPECT_THROW(sgemm_packed({4, 8, 48, 128, 512, SgemmOrder::jpi, 0}, pool, args),
               std::invalid_argument);
}

TEST(Sgemm, ToleranceStaysBelowATypicalTerm) {
  // Even at the largest k, an element off by one product of typical size (|a·b| ~ 1/4) fails.
  cpu::ThreadPool pool(1);
  const auto op = make_sgemm_op_typed(pool);
  // Through OpBase: Op<Args>'s tolerance(...) setters hide the getter.
  const OpBase& base = *op;
  const Tolerance t = base.tolerance(op->parse_shape("m=8192,n=8192,k=8192"));
  EXPECT_LT(t.abs, 0.01);
}

}  // namespace
}  // namespace tunekit::kernels
