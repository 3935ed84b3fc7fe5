// Softmax and RMS normalisation over rows on OpenCL (kernels/opencl/softmax.cl, rmsnorm.cl):
// one work-group per row, tunable work-group size and vector width, validated against the
// CPU references.
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "opencl/cl_common.hpp"
#include "opencl/cl_ops.hpp"
#include "opencl/rmsnorm_cl.hpp"
#include "opencl/softmax_cl.hpp"
#include "rmsnorm/rmsnorm.hpp"
#include "softmax/softmax.hpp"

namespace tunekit::kernels::cl {
namespace {

struct SoftmaxState {
  SoftmaxState(std::shared_ptr<opencl::Context> context, SoftmaxArgs args)
      : host(std::move(args)),
        kernels(context),
        x(*context, host.x.size() * sizeof(float)),
        y(*context, host.y) {
    upload_inputs();
  }
  // The host inputs to the device (again, to undo a candidate that wrote its input buffer).
  void upload_inputs() { x.write(host.x.data(), host.x.size() * sizeof(float)); }
  SoftmaxArgs host;
  KernelSet kernels;
  opencl::Buffer x;
  MirroredOutput y;
};

struct RmsnormState {
  RmsnormState(std::shared_ptr<opencl::Context> context, RmsnormArgs args)
      : host(std::move(args)),
        kernels(context),
        x(*context, host.x.size() * sizeof(float)),
        w(*context, host.w.size() * sizeof(float)),
        y(*context, host.y) {
    upload_inputs();
  }
  void upload_inputs() {
    x.write(host.x.data(), host.x.size() * sizeof(float));
    w.write(host.w.data(), host.w.size() * sizeof(float));
  }
  RmsnormArgs host;
  KernelSet kernels;
  opencl::Buffer x, w;
  MirroredOutput y;
};

struct ClSoftmaxArgs {
  std::shared_ptr<SoftmaxState> state;
};
struct ClRmsnormArgs {
  std::shared_ptr<RmsnormState> state;
};

// One work-group of `wg` work-items per row.
void launch_rows(opencl::Kernel& k, std::size_t rows, std::size_t wg) {
  const std::size_t global[1] = {rows * wg};
  const std::size_t local[1] = {wg};
  k.launch(global, local);
}

std::size_t work_group(const Config& c) {
  return static_cast<std::size_t>(c["WG"].as_int());
}

// The row ops' shared key: rows × cols f32, element budget as the CPU ops.
template <class Args>
void row_key_fields(Op<Args>& op, std::string_view name, std::int64_t max_dim) {
  op.key_field(
        {"rows", Value::Type::integer, "rows (one work-group each)", std::nullopt, 1, max_dim})
      .key_field({"cols", Value::Type::integer, "length of each row", std::nullopt, 1, max_dim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0});
  (void)name;
}

Key row_key(std::size_t rows, std::size_t cols) {
  return Key{{"rows", static_cast<std::int64_t>(rows)},
             {"cols", static_cast<std::int64_t>(cols)},
             {"dtype", "f32"}};
}

// Same bound as the CPU ops: the row sum's rounding error grows like sqrt(cols) ulps.
Tolerance row_tolerance(const Key& key) {
  const double cols = static_cast<double>(key.integer("cols"));
  return Tolerance{0x1p-100, 0x1p-22 * (4.0 + std::sqrt(cols))};
}

}  // namespace

Space softmax_space() {
  Space s;
  s.param("WG", {16, 32, 64, 128, 256}).param("VW", {1, 2, 4}).param("EXP", {"exp", "native_exp"});
  return s;
}

Space rmsnorm_space() {
  Space s;
  s.param("WG", {16, 32, 64, 128, 256}).param("VW", {1, 2, 4});
  return s;
}

std::unique_ptr<OpBase> make_softmax_op(std::shared_ptr<opencl::Context> context,
                                        cpu::ThreadPool& /*pool*/) {
  // Schema 2: the candidates are the points of one space (schema 1 was a list).
  auto op = std::make_unique<Op<ClSoftmaxArgs>>("softmax", 2);
  op->describe(
      "OpenCL row-wise f32 softmax, one work-group per row: work-group size WG, vector "
      "width VW, exp or native_exp (approximate)");
  row_key_fields(*op, "softmax", kSoftmaxMaxDim);
  op->key([](const ClSoftmaxArgs& a) { return row_key(a.state->host.rows, a.state->host.cols); })
      .key_check([](const Key& key) {
        check_rows_cols_key(key, "softmax", kSoftmaxMaxDim, kSoftmaxMaxElements);
      })
      .inputs([context](const Key& key, int input_set) {
        check_rows_cols_key(key, "softmax", kSoftmaxMaxDim, kSoftmaxMaxElements);
        SoftmaxArgs host =
            make_softmax_args(key_dimension(key, "rows", "softmax", kSoftmaxMaxDim),
                              key_dimension(key, "cols", "softmax", kSoftmaxMaxDim), input_set);
        return ClSoftmaxArgs{std::make_shared<SoftmaxState>(context, std::move(host))};
      })
      // The Args are a handle: copying them would restore nothing on the device.
      .restore([](ClSoftmaxArgs& a) { a.state->upload_inputs(); })
      .outputs([](ClSoftmaxArgs& a) {
        a.state->y.read();
        return std::vector<OutputView>{OutputView::of(std::span(a.state->host.y))};
      })
      .reference([](ClSoftmaxArgs& a) {
        softmax_reference(a.state->host);
        a.state->y.write();
      })
      .tolerance(row_tolerance);

  // Work-group size and vector width change the reduction trees: reassociates; native_exp
  // changes values beyond reordering: approximate.
  auto step = std::make_shared<BuildStep>(context, opencl_sources::softmax, "softmax");
  op->space(softmax_space(),
            [](const Config& config) -> std::function<void(ClSoftmaxArgs&)> {
              return [wg = work_group(config), options = build_options(config)](ClSoftmaxArgs& a) {
                SoftmaxState& s = *a.state;
                s.y.before_launch();
                opencl::Kernel& k = s.kernels.get(opencl_sources::softmax, options, "softmax");
                k.set_arg(0, static_cast<int>(s.host.cols));
                k.set_arg(1, s.x);
                k.set_arg(2, s.y.buffer());
                launch_rows(k, s.host.rows, wg);
              };
            })
      .numerics([](const Config& config) {
        return config["EXP"].as_string() == "native_exp" ? Numerics::approximate
                                                         : Numerics::reassociates;
      })
      .build([step](const Config& config) {
        // One row of zero columns: the loops do not run, nothing is read or written.
        const std::size_t local[1] = {work_group(config)};
        return (*step)(build_options(config), local, sizeof(float),
                       [](opencl::Kernel& k, opencl::Buffer& scratch) {
                         k.set_arg(0, 0);
                         k.set_arg(1, scratch);
                         k.set_arg(2, scratch);
                       });
      })
      .default_config(Config{{"WG", 64}, {"VW", 1}, {"EXP", "exp"}});
  return op;
}

std::unique_ptr<OpBase> make_rmsnorm_op(std::shared_ptr<opencl::Context> context,
                                        cpu::ThreadPool& /*pool*/) {
  // Schema 2: the candidates are the points of one space (schema 1 was a list).
  auto op = std::make_unique<Op<ClRmsnormArgs>>("rmsnorm", 2);
  op->describe(
      "OpenCL row-wise f32 RMS normalisation with a weight vector, one work-group per "
      "row: work-group size WG, vector width VW");
  row_key_fields(*op, "rmsnorm", kRmsnormMaxDim);
  op->key([](const ClRmsnormArgs& a) { return row_key(a.state->host.rows, a.state->host.cols); })
      .key_check([](const Key& key) {
        check_rows_cols_key(key, "rmsnorm", kRmsnormMaxDim, kRmsnormMaxElements);
      })
      .inputs([context](const Key& key, int input_set) {
        check_rows_cols_key(key, "rmsnorm", kRmsnormMaxDim, kRmsnormMaxElements);
        RmsnormArgs host =
            make_rmsnorm_args(key_dimension(key, "rows", "rmsnorm", kRmsnormMaxDim),
                              key_dimension(key, "cols", "rmsnorm", kRmsnormMaxDim), input_set);
        return ClRmsnormArgs{std::make_shared<RmsnormState>(context, std::move(host))};
      })
      .restore([](ClRmsnormArgs& a) { a.state->upload_inputs(); })
      .outputs([](ClRmsnormArgs& a) {
        a.state->y.read();
        return std::vector<OutputView>{OutputView::of(std::span(a.state->host.y))};
      })
      .reference([](ClRmsnormArgs& a) {
        rmsnorm_reference(a.state->host);
        a.state->y.write();
      })
      .tolerance(row_tolerance);

  auto step = std::make_shared<BuildStep>(context, opencl_sources::rmsnorm, "rmsnorm");
  op->space(rmsnorm_space(),
            [](const Config& config) -> std::function<void(ClRmsnormArgs&)> {
              return [wg = work_group(config), options = build_options(config)](ClRmsnormArgs& a) {
                RmsnormState& s = *a.state;
                s.y.before_launch();
                opencl::Kernel& k = s.kernels.get(opencl_sources::rmsnorm, options, "rmsnorm");
                k.set_arg(0, static_cast<int>(s.host.cols));
                k.set_arg(1, s.host.eps);
                k.set_arg(2, s.x);
                k.set_arg(3, s.w);
                k.set_arg(4, s.y.buffer());
                launch_rows(k, s.host.rows, wg);
              };
            })
      .numerics([](const Config&) { return Numerics::reassociates; })
      .build([step](const Config& config) {
        // One row of zero columns: the loops do not run, nothing is read or written.
        const std::size_t local[1] = {work_group(config)};
        return (*step)(build_options(config), local, sizeof(float),
                       [](opencl::Kernel& k, opencl::Buffer& scratch) {
                         k.set_arg(0, 0);
                         k.set_arg(1, 1.0f);
                         k.set_arg(2, scratch);
                         k.set_arg(3, scratch);
                         k.set_arg(4, scratch);
                       });
      })
      .default_config(Config{{"WG", 64}, {"VW", 1}});
  return op;
}

}  // namespace tunekit::kernels::cl
