// quickstart: make your own op tunable in one screen. A row sum with three candidates; the
// tuner checks each against the reference, times it, and serves the fastest correct one.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <span>
#include <vector>

#include <tunekit/tunekit.hpp>

struct RowSum {  // out[r] = sum of row r of a rows x cols row-major matrix
  std::int64_t rows = 0, cols = 0;
  std::vector<float> in, out;
  const float* row(std::int64_t r) const { return in.data() + r * cols; }
};

RowSum make_rowsum(std::int64_t rows, std::int64_t cols) {
  RowSum a{rows, cols, std::vector<float>(std::size_t(rows * cols)),
           std::vector<float>(std::size_t(rows))};
  for (std::size_t i = 0; i < a.in.size(); ++i) a.in[i] = float(i % 7) * 0.25f;
  return a;
}

int main() {
  using tunekit::Key;
  tunekit::Candidate unroll4;  // a candidate with more than a name
  unroll4.name = "unroll4";
  unroll4.numerics = tunekit::Numerics::reassociates;  // four partial sums: another order

  tunekit::Op<RowSum> rowsum("rowsum", /*schema=*/1);
  rowsum
      .describe("sum of each row of a row-major matrix")
      // The key's names once, its values per call: a hit never builds a Key (~14 ns).
      .key({"rows", "cols"},
           [](const RowSum& a) {
             return tunekit::KeyValues{a.rows, a.cols};
           })
      .inputs([](const Key& k) { return make_rowsum(k.integer("rows"), k.integer("cols")); })
      .outputs([](RowSum& a) { return std::vector{tunekit::OutputView::of(std::span(a.out))}; })
      .reference([](RowSum& a) {  // defines "correct": summed in double
        for (std::int64_t r = 0; r < a.rows; ++r) {
          double s = 0;
          for (std::int64_t c = 0; c < a.cols; ++c) s += a.row(r)[c];
          a.out[std::size_t(r)] = float(s);
        }
      })
      .candidate("by_rows",
                 [](RowSum& a) {
                   for (std::int64_t r = 0; r < a.rows; ++r) {
                     float s = 0;
                     for (std::int64_t c = 0; c < a.cols; ++c) s += a.row(r)[c];
                     a.out[std::size_t(r)] = s;
                   }
                 })
      .candidate("by_columns",
                 [](RowSum& a) {  // strided reads: slow once the matrix leaves the cache
                   std::fill(a.out.begin(), a.out.end(), 0.0f);
                   for (std::int64_t c = 0; c < a.cols; ++c)
                     for (std::int64_t r = 0; r < a.rows; ++r) a.out[std::size_t(r)] += a.row(r)[c];
                 })
      .candidate(unroll4,
                 [](RowSum& a) {
                   for (std::int64_t r = 0; r < a.rows; ++r) {
                     const float* x = a.row(r);
                     float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                     std::int64_t c = 0;
                     for (; c + 4 <= a.cols; c += 4) {
                       s0 += x[c];
                       s1 += x[c + 1];
                       s2 += x[c + 2];
                       s3 += x[c + 3];
                     }
                     for (; c < a.cols; ++c) s0 += x[c];
                     a.out[std::size_t(r)] = (s0 + s1) + (s2 + s3);
                   }
                 })
      .default_candidate("by_rows")
      .tolerance(tunekit::Tolerance{.abs = 1e-3, .rel = 1e-4});

  tunekit::cpu::CpuDevice device;
  tunekit::Tuner tuner(device, tunekit::TunerOptions::from_environment());  // TUNEKIT_MODE

  RowSum args = make_rowsum(1024, 1024);
  // The first call for a key searches (mode permitting; a later run of this program is served
  // from the store, TUNEKIT_MODE=force measures again); ask for its report to see why.
  tunekit::TuneReport report;
  rowsum.call(tuner.select(rowsum, rowsum.key_of(args), &report).index, args);
  // Every later call is a lock-free table lookup and a direct call of the winner.
  tuner.run(rowsum, args);
  tuner.run(rowsum, args);

  tunekit::make_reporter("console")->write(report, std::cout);
  std::cout << "out[0] = " << args.out[0] << '\n';
}
