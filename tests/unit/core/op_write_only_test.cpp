// Op::write_only (include/tunekit/op.hpp): members every candidate overwrites and never reads
// are not copied back before a phase, keep their storage, get their size back when a
// candidate changed it; each must be an output named once; a copy back that throws loses
// neither side.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/op.hpp"

namespace tunekit {
namespace {

// An out-of-place op's output, declared write-only: the inputs (and every other member) are
// copied back, the output keeps its storage and contents unless a candidate changed its size.
struct OutOfPlaceArgs {
  std::size_t n = 0;
  std::vector<float> x;
  std::vector<float> y;
};

TEST(Op, WriteOnlyMembersAreNotCopiedBackButKeepTheirSize) {
  Op<OutOfPlaceArgs> op("out_of_place", 1);
  op.inputs([](const Key&) {
      return OutOfPlaceArgs{3, {1, 2, 3}, {0, 0, 0}};
    })
      .outputs(
          [](OutOfPlaceArgs& a) { return std::vector<OutputView>{OutputView::of(std::span(a.y))}; })
      .write_only(&OutOfPlaceArgs::y);
  Candidate scribbler;
  scribbler.name = "scribbler";
  op.candidate(scribbler, [](OutOfPlaceArgs& a) {
      a.n = 99;  // hostile: its dimensions and inputs
      a.x.assign(5, -1.0f);
      for (float& v : a.y) v = 4.0f;
    }).default_candidate("scribbler");
  auto w = op.make_workload(Key{});
  const float* y_storage = static_cast<const float*>(w->outputs()[0].data);
  w->run_candidate(0);
  ASSERT_TRUE(w->restore_inputs());
  const OutputView y = w->outputs()[0];
  EXPECT_EQ(y.data, y_storage);  // kept, not copied back: what the candidate wrote is there
  ASSERT_EQ(y.count, 3u);
  EXPECT_EQ(static_cast<const float*>(y.data)[0], 4.0f);
  // The rest came back as made: run a candidate that reports what it sees.
  OutOfPlaceArgs seen;
  Candidate reader;
  reader.name = "reader";
  op.candidate(reader, [&seen](OutOfPlaceArgs& a) { seen = a; });
  w->run_candidate(1);
  EXPECT_EQ(seen.n, 3u);
  EXPECT_EQ(seen.x, (std::vector<float>{1, 2, 3}));
  // A candidate that resized its output gets the size it was made with back; the Args it was
  // made with are intact after every copy back (a second one restores the same).
  Candidate shrinker;
  shrinker.name = "shrinker";
  op.candidate(shrinker, [](OutOfPlaceArgs& a) { a.y.clear(); });
  w->run_candidate(2);
  ASSERT_TRUE(w->restore_inputs());
  ASSERT_TRUE(w->restore_inputs());
  w->run_candidate(1);
  EXPECT_EQ(seen.y, (std::vector<float>{0, 0, 0}));  // as made
  EXPECT_EQ(seen.x, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(seen.n, 3u);
}

TEST(Op, WriteOnlyMembersMustBeOutputsNamedOnce) {
  const auto make_op = [](auto declare) {
    auto op = std::make_unique<Op<OutOfPlaceArgs>>("out_of_place", 1);
    op->inputs([](const Key&) {
        return OutOfPlaceArgs{3, {1, 2, 3}, {0, 0, 0}};
      }).outputs([](OutOfPlaceArgs& a) {
      return std::vector<OutputView>{OutputView::of(std::span(a.y))};
    });
    declare(*op);
    Candidate c;
    c.name = "c";
    op->candidate(c, [](OutOfPlaceArgs&) {}).default_candidate("c");
    return op;
  };
  // x is an input: never poisoned, so what a candidate left there would reach the next one.
  auto input = make_op([](auto& op) { op.write_only(&OutOfPlaceArgs::x); });
  EXPECT_THROW(input->make_workload(Key{}), UsageError);
  auto twice = make_op([](auto& op) { op.write_only(&OutOfPlaceArgs::y, &OutOfPlaceArgs::y); });
  EXPECT_THROW(twice->make_workload(Key{}), UsageError);
  auto right = make_op([](auto& op) { op.write_only(&OutOfPlaceArgs::y); });
  EXPECT_NO_THROW(right->make_workload(Key{}));
}

// A copy back that throws half way (here a member's copy-assignment) loses neither the live
// output's storage nor the Args the workload was made with.
struct ThrowingCopy {
  std::shared_ptr<bool> fail = std::make_shared<bool>(false);
  ThrowingCopy() = default;
  ThrowingCopy(const ThrowingCopy&) = default;
  ThrowingCopy& operator=(const ThrowingCopy& other) {
    if (*other.fail) throw std::runtime_error("copy refused");
    fail = other.fail;
    return *this;
  }
};
struct ThrowingArgs {
  std::vector<float> x;
  std::vector<float> y;
  ThrowingCopy guard;
};

TEST(Op, AWriteOnlyCopyBackThatThrowsKeepsBothSides) {
  Op<ThrowingArgs> op("throwing", 1);
  auto fail = std::make_shared<bool>(false);
  op.inputs([fail](const Key&) {
      ThrowingArgs a{{1, 2}, {0, 0}, {}};
      a.guard.fail = fail;
      return a;
    })
      .outputs(
          [](ThrowingArgs& a) { return std::vector<OutputView>{OutputView::of(std::span(a.y))}; })
      .write_only(&ThrowingArgs::y);
  std::vector<float> seen_x, seen_y;
  Candidate writer;
  writer.name = "writer";
  Candidate reader;
  reader.name = "reader";
  op.candidate(writer, [](ThrowingArgs& a) { a.y.assign(7, 5.0f); })
      .candidate(reader,
                 [&](ThrowingArgs& a) {
                   seen_x = a.x;
                   seen_y = a.y;
                 })
      .default_candidate("reader");
  auto w = op.make_workload(Key{});
  const void* y_storage = w->outputs()[0].data;
  *fail = true;
  EXPECT_THROW(w->restore_inputs(), std::runtime_error);
  EXPECT_EQ(w->outputs()[0].data, y_storage);  // the live output kept its storage
  *fail = false;
  w->run_candidate(0);  // resizes y: the copy back must find the made y to give its size back
  ASSERT_TRUE(w->restore_inputs());
  w->run_candidate(1);
  EXPECT_EQ(seen_y, (std::vector<float>{0, 0}));
  EXPECT_EQ(seen_x, (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace tunekit
