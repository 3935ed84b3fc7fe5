// Tests for the candidates of every op in kernels/catalog.cpp: every CPU kernel candidate
// agrees with its reference on random inputs at odd shapes (1, 7, 33, 257, ...), candidates
// declared bitwise reproduce the default's bits, and every candidate is deterministic.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/validate.hpp"

namespace tunekit {
namespace {

struct Case {
  std::string op;
  std::string shape;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.op << " " << c.shape;
}

// Odd sizes: smaller than, straddling and just past the kernels' blocks, lane counts and
// register tiles (sgemm packs 4-8 rows × 8-16 columns, caches 48-96 × 128-256 × 512-2048;
// softmax and rmsnorm use up to 16 lanes and 16 rows per task; sum chunks by 64).
const Case kCases[] = {
    {"sgemm", "m=1,n=1,k=1"},
    {"sgemm", "m=7,n=33,k=1"},
    {"sgemm", "m=33,n=7,k=257"},
    {"sgemm", "m=257,n=33,k=7"},
    {"sgemm", "m=1,n=257,k=33"},
    {"sgemm", "m=65,n=129,k=300"},
    {"sgemm", "m=100,n=600,k=130"},
    {"softmax", "rows=1,cols=1"},
    {"softmax", "rows=7,cols=33"},
    {"softmax", "rows=33,cols=257"},
    {"softmax", "rows=3,cols=1000"},
    {"softmax", "rows=257,cols=7"},
    {"softmax", "rows=1,cols=4097"},
    {"rmsnorm", "rows=1,cols=1"},
    {"rmsnorm", "rows=7,cols=33"},
    {"rmsnorm", "rows=33,cols=257"},
    {"rmsnorm", "rows=3,cols=1000"},
    {"rmsnorm", "rows=257,cols=7"},
    {"rmsnorm", "rows=1,cols=4097"},
    {"sum", "n=1"},
    {"sum", "n=7"},
    {"sum", "n=33"},
    {"sum", "n=257"},
    {"sum", "n=100003"},
    {"sum", "n=1000003"},
};

class Candidates : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    op_ = find_builtin_op(GetParam().op).make(pool_);
    key_ = op_->parse_shape(GetParam().shape);
    workload_ = op_->make_workload(key_);
  }

  // A copy of the bits of every output element.
  std::vector<std::vector<unsigned char>> output_bits() {
    std::vector<std::vector<unsigned char>> bits;
    for (const OutputView& v : workload_->outputs()) {
      const std::size_t size = v.count * (v.type == OutputView::Type::f32 ? 4 : 8);
      const auto* p = static_cast<const unsigned char*>(v.data);
      bits.emplace_back(p, p + size);
    }
    return bits;
  }

  void run(std::size_t index) {
    poison(workload_->outputs());
    workload_->run_candidate(index);
  }

  cpu::ThreadPool pool_{2};
  std::unique_ptr<OpBase> op_;
  Key key_;
  std::unique_ptr<Workload> workload_;
};

TEST_P(Candidates, AgreeWithTheReference) {
  ASSERT_TRUE(op_->has_reference());
  const Reference ref = Reference::capture(*workload_, true, op_->default_index(key_));
  const Tolerance tolerance = op_->tolerance(key_);
  for (std::size_t i = 0; i < op_->size(); ++i) {
    const Outcome outcome = ref.check(*workload_, i, tolerance);
    EXPECT_TRUE(outcome.ok()) << op_->candidate(i).name << " at " << key_.text() << ": "
                              << outcome.message;
  }
}

TEST_P(Candidates, BitwiseCandidatesReproduceTheDefault) {
  const std::size_t def = op_->default_index(key_);
  EXPECT_EQ(op_->candidate(def).numerics, Numerics::bitwise);
  run(def);
  const auto expected = output_bits();
  for (std::size_t i = 0; i < op_->size(); ++i) {
    if (op_->candidate(i).numerics != Numerics::bitwise) continue;
    run(i);
    EXPECT_EQ(output_bits(), expected)
        << op_->candidate(i).name << " claims bitwise at " << key_.text();
  }
}

TEST_P(Candidates, AreDeterministic) {
  for (std::size_t i = 0; i < op_->size(); ++i) {
    run(i);
    const auto first = output_bits();
    run(i);
    EXPECT_EQ(output_bits(), first) << op_->candidate(i).name << " at " << key_.text();
  }
}

INSTANTIATE_TEST_SUITE_P(OddShapes, Candidates, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           std::string name = param.param.op + "_" + param.param.shape;
                           for (char& c : name) {
                             if (c == '=' || c == ',') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tunekit
