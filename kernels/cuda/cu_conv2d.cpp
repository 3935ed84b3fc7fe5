// 2D convolution on CUDA (kernels/cuda/conv2d.cu): tunable block (BX, BY), outputs per thread
// (TX, TY) and shared-memory staging (SL), validated against a double-precision CPU reference.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "common.hpp"
#include "conv2d/conv2d.hpp"
#include "cuda/conv2d_cu.hpp"
#include "cuda/cu_common.hpp"
#include "cuda/cu_ops.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels::cu {
namespace {

struct Conv2dState {
  Conv2dState(const std::shared_ptr<cuda::Context>& context, Conv2dHost args)
      : host(std::move(args)),
        hp(round_up(host.h, kConv2dPadH)),
        wp(round_up(host.w, kConv2dPadW)),
        functions(context),
        in(*context, (hp + host.fh - 1) * (wp + host.fw - 1) * sizeof(float)),
        filter(*context, host.filter.size() * sizeof(float)),
        out(*context, host.out, host.h, host.w, hp, wp) {
    upload_inputs();
  }
  // The host inputs to the device, padded (again, to undo a candidate that wrote them).
  void upload_inputs() {
    upload_padded(in, host.in, host.h + host.fh - 1, host.w + host.fw - 1, hp + host.fh - 1,
                  wp + host.fw - 1);
    filter.write(host.filter.data(), host.filter.size() * sizeof(float));
  }
  Conv2dHost host;
  std::size_t hp, wp;
  FunctionSet functions;
  cuda::Buffer in, filter;
  DeviceOutput out;
};

struct CuConv2dArgs {
  std::shared_ptr<Conv2dState> state;
};

unsigned conv_param(const Config& c, const char* name) {
  return static_cast<unsigned>(c[name].as_int());
}

// One launch: ceil(h / TILE_H) x ceil(w / TILE_W) blocks of BX x BY.
void run(const Config& config, Conv2dState& s) {
  const unsigned bx = conv_param(config, "BX"), by = conv_param(config, "BY");
  const KernelRecipe r = conv2d_recipe(config, s.host.fh, s.host.fw);
  cuda::Function& f = s.functions.get(r.source, r.options, "conv2d");
  launch(f,
         {blocks(s.host.w, bx * conv_param(config, "TX")),
          blocks(s.host.h, by * conv_param(config, "TY"))},
         {bx, by}, ptr(s.in), ptr(s.filter), ptr(s.out.buffer()), static_cast<int>(s.wp));
}

}  // namespace

Space conv2d_space() {
  Space s;
  s.param("BX", {16, 32})
      .param("BY", {4, 8, 16})
      .param("TX", {1, 2, 4})
      .param("TY", {1, 2, 4})
      .param("SL", {0, 1})
      // 64 to 256 threads per block, at most 4 outputs per thread: 60 configurations.
      .constraint("BX * BY >= 64")
      .constraint("BX * BY <= 256")
      .constraint("TX * TY <= 4");
  return s;
}

Config conv2d_default_config() {
  return Config{{"BX", 16}, {"BY", 4}, {"TX", 1}, {"TY", 1}, {"SL", 0}};
}

KernelRecipe conv2d_recipe(const Config& config, std::size_t fh, std::size_t fw) {
  std::vector<std::string> options = define_options(config);
  options.push_back("-DFH=" + std::to_string(fh));
  options.push_back("-DFW=" + std::to_string(fw));
  return {cuda_sources::conv2d, std::move(options), {"conv2d"}};
}

std::unique_ptr<OpBase> make_conv2d_op(std::shared_ptr<cuda::Context> context,
                                       cpu::ThreadPool& /*pool*/) {
  auto op = std::make_unique<Op<CuConv2dArgs>>("conv2d", 1);
  op->describe(
        "CUDA 2D convolution (valid correlation) of an h×w output with an fh×fw filter: block "
        "BX×BY, outputs per thread TX×TY, shared-memory staging SL")
      .key_field({"h", Value::Type::integer, "output rows", std::nullopt, 1, kConv2dMaxImage})
      .key_field({"w", Value::Type::integer, "output columns", std::nullopt, 1, kConv2dMaxImage})
      .key_field(
          {"fh", Value::Type::integer, "filter rows", Value(std::int64_t{5}), 1, kConv2dMaxFilter})
      .key_field({"fw", Value::Type::integer, "filter columns", Value(std::int64_t{5}), 1,
                  kConv2dMaxFilter})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key([](const CuConv2dArgs& a) {
        const Conv2dHost& c = a.state->host;
        return Key{{"h", static_cast<std::int64_t>(c.h)},
                   {"w", static_cast<std::int64_t>(c.w)},
                   {"fh", static_cast<std::int64_t>(c.fh)},
                   {"fw", static_cast<std::int64_t>(c.fw)},
                   {"dtype", "f32"}};
      })
      .key_check(check_conv2d_key)
      .inputs([context](const Key& key, int input_set) {
        check_conv2d_key(key);
        return CuConv2dArgs{std::make_shared<Conv2dState>(require_context(context),
                                                          make_conv2d_host(key, input_set))};
      })
      // The Args are a handle: copying them would restore nothing on the device.
      .restore([](CuConv2dArgs& a) { a.state->upload_inputs(); })
      .outputs([](CuConv2dArgs& a) {
        a.state->out.read();
        return std::vector<OutputView>{OutputView::of(std::span(a.state->host.out))};
      })
      .validator([](CuConv2dArgs& a) { a.state->out.write(); },
                 nullptr)  // the poison, on the device
      .reference([](CuConv2dArgs& a) {
        conv2d_reference(a.state->host);
        a.state->out.write();
      })
      // A sum of fh·fw products of values in [-1, 1): as sgemm's k-term dot products.
      .tolerance([](const Key& key) {
        const double terms = static_cast<double>(key.integer("fh") * key.integer("fw"));
        return Tolerance{0x1p-20 * terms, 0x1p-17};
      });

  op->space(conv2d_space(),
            [](const Config& config) -> std::function<void(CuConv2dArgs&)> {
              return [config](CuConv2dArgs& a) { run(config, *a.state); };
            })
      .numerics([](const Config&) { return Numerics::reassociates; })
      // The filter size (a key field) joins the build options: the build takes the key.
      .build([context](const Key& key, const Config& config) {
        const KernelRecipe r = conv2d_recipe(config, static_cast<std::size_t>(key.integer("fh")),
                                             static_cast<std::size_t>(key.integer("fw")));
        return build_functions(*require_context(context), r.source, r.options, r.names);
      })
      .default_config(conv2d_default_config());
  return op;
}

}  // namespace tunekit::kernels::cu
