// Tests for src/core/key.cpp, src/tuner/choice_table.cpp and Tuner::run: what run pays on
// every hit (building a typical key or a typed key's values, hashing, reading the table)
// allocates nothing. This file is
// its own executable (tunekit_allocation_tests): it replaces the global operator new to count
// allocations, and no other test should run under that replacement.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/key.hpp"
#include "tunekit/tuner.hpp"
#include "tuner/choice_table.hpp"

namespace {
// Per thread, so allocations on gtest's or the library's other threads do not count here.
thread_local long allocations = 0;
}  // namespace

// GCC's -Wmismatched-new-delete misreads free() in a replaced delete as freeing new's memory.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
// The other forms too, so that every allocation and every release meet in malloc and free: a
// form left to the runtime (the nothrow new std::stable_sort's buffer takes, under ASan its own)
// would be freed by the delete above, a mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size) {
  return ::operator new(size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return ::operator new(size, tag);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace tunekit {
namespace {

template <class F>
long allocations_during(F&& f) {
  const long before = allocations;
  f();
  return allocations - before;
}

// Values the compiler cannot fold, as a caller's arguments would be.
volatile long m_arg = 4096, n_arg = 2048, k_arg = 512, batch_arg = 8;

Key gemm_key() {
  return Key{{"m", m_arg}, {"n", n_arg}, {"k", k_arg}, {"batch", batch_arg}};
}

TEST(KeyAllocation, CounterSeesAllocations) {
  // The check below is only worth something if the counter works.
  EXPECT_GE(allocations_during([] {
              std::vector<Field> fields(Key::inline_fields + 1);
              for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = std::to_string(i);
              Key k(std::move(fields));
              EXPECT_NE(k.digest(), Key{}.digest());
            }),
            1);
}

TEST(KeyAllocation, FourIntegerFieldsBuildAndHashWithoutAllocating) {
  Digest digest;
  EXPECT_EQ(allocations_during([&] { digest = gemm_key().digest(); }), 0);
  EXPECT_EQ(digest, Digest::of(gemm_key().encode()));
}

TEST(KeyAllocation, TypicalMixedKeyBuildsWithoutAllocating) {
  EXPECT_EQ(allocations_during([] {
              Key k{{"rows", m_arg}, {"cols", n_arg}, {"dtype", "f32"},     {"layout", "row_major"},
                    {"alpha", 1.5},  {"trans", true}, {"batch", batch_arg}, {"mode", "inference"}};
              EXPECT_EQ(k.fields().size(), Key::inline_fields);
            }),
            0);
}

TEST(KeyAllocation, CopyMoveAndLookupDoNotAllocate) {
  const Key key = gemm_key();
  EXPECT_EQ(allocations_during([&] {
              Key copy = key;
              Key moved = std::move(copy);
              EXPECT_EQ(moved.integer("k"), 512);
              EXPECT_TRUE(moved == key);
            }),
            0);
}

TEST(KeyAllocation, ChoiceTableHitDoesNotAllocate) {
  detail::ChoiceTable table;
  const Digest op = Digest::of("op");
  table.publish(op, gemm_key().digest(), 3);
  std::size_t found = 0;
  EXPECT_EQ(allocations_during([&] { found = table.find(op, gemm_key().digest()).value_or(0); }),
            0);
  EXPECT_EQ(found, 3u);
}

struct Gemm {
  long m = 0, n = 0, k = 0;
  std::vector<float> out;
};

void fill(Gemm& g) {
  for (float& x : g.out) x = 1.0f;
}

TEST(KeyAllocation, ATypedRunHitDoesNotAllocate) {
  cpu::CpuDevice device;
  TunerOptions options;
  options.decide.mode = Mode::tune;
  Tuner tuner(device, options);
  Op<Gemm> op("alloc_gemm", 1);
  op.key({"m", "n", "k", "dtype"},
         [](const Gemm& g) {
           return KeyValues{g.m, g.n, g.k, "f32"};
         })
      .inputs([](const Key& key) {
        return Gemm{key.integer("m"), key.integer("n"), key.integer("k"), std::vector<float>(8)};
      })
      .outputs([](Gemm& g) { return std::vector{OutputView::of(std::span<float>(g.out))}; })
      .candidate("fill", fill)
      .candidate("fill_too", fill);
  Gemm args{m_arg, n_arg, k_arg, std::vector<float>(8)};
  tuner.run(op, args);  // the miss: searched and published
  ASSERT_TRUE(tuner.settled(op, op.key_of(args)).has_value());
  // The counter sees a miss's Key being built, so the zero below is worth something.
  EXPECT_GE(allocations_during([&] { (void)op.key_of(args); }), 1);
  EXPECT_EQ(allocations_during([&] { tuner.run(op, args); }), 0);
}

}  // namespace
}  // namespace tunekit
