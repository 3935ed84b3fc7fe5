// 2D convolution on OpenCL (kernels/opencl/conv2d.cl): tunable work-group (BX, BY), outputs
// per work-item (TX, TY) and local-memory staging (SL), validated against a double-precision
// CPU reference.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "conv2d/conv2d.hpp"
#include "opencl/cl_common.hpp"
#include "opencl/cl_ops.hpp"
#include "opencl/conv2d_cl.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels::cl {
namespace {

struct Conv2dState {
  Conv2dState(std::shared_ptr<opencl::Context> context, Conv2dHost args)
      : host(std::move(args)),
        hp(round_up(host.h, kConv2dPadH)),
        wp(round_up(host.w, kConv2dPadW)),
        kernels(context),
        in(*context, (hp + host.fh - 1) * (wp + host.fw - 1) * sizeof(float)),
        filter(*context, host.filter.size() * sizeof(float)),
        out(*context, host.out, host.h, host.w, hp, wp) {
    upload_inputs();
  }
  // The host inputs to the device, padded (again, to undo a candidate that wrote them).
  void upload_inputs() {
    const std::size_t in_w = host.w + host.fw - 1, pin_w = wp + host.fw - 1;
    std::vector<float> padded((hp + host.fh - 1) * pin_w, 0.0f);
    for (std::size_t r = 0; r < host.h + host.fh - 1; ++r)
      std::copy_n(host.in.data() + r * in_w, in_w, padded.data() + r * pin_w);
    in.write(padded.data(), padded.size() * sizeof(float));
    filter.write(host.filter.data(), host.filter.size() * sizeof(float));
  }
  Conv2dHost host;
  std::size_t hp, wp;
  KernelSet kernels;
  opencl::Buffer in, filter;
  MirroredOutput out;
};

struct ClConv2dArgs {
  std::shared_ptr<Conv2dState> state;
};

std::size_t param(const Config& c, const char* name) {
  return static_cast<std::size_t>(c[name].as_int());
}

std::string filter_options(const Config& config, std::size_t fh, std::size_t fw) {
  return build_options(config) + " -DFH=" + std::to_string(fh) + " -DFW=" + std::to_string(fw);
}

}  // namespace

Space conv2d_space() {
  Space s;
  s.param("BX", {16, 32})
      .param("BY", {4, 8, 16})
      .param("TX", {1, 2, 4})
      .param("TY", {1, 2, 4})
      .param("SL", {0, 1})
      // 64 to 256 work-items per group, at most 4 outputs per work-item: 60 configurations.
      .constraint("BX * BY >= 64")
      .constraint("BX * BY <= 256")
      .constraint("TX * TY <= 4");
  return s;
}

std::unique_ptr<OpBase> make_conv2d_op(std::shared_ptr<opencl::Context> context,
                                       cpu::ThreadPool& /*pool*/) {
  // Schema 2: the candidates are the points of one space (schema 1 was a list).
  auto op = std::make_unique<Op<ClConv2dArgs>>("conv2d", 2);
  op->describe(
        "OpenCL 2D convolution (valid correlation) of an h×w output with an fh×fw filter: "
        "work-group BX×BY, outputs per work-item TX×TY, local-memory staging SL")
      .key_field({"h", Value::Type::integer, "output rows", std::nullopt, 1, kConv2dMaxImage})
      .key_field({"w", Value::Type::integer, "output columns", std::nullopt, 1, kConv2dMaxImage})
      .key_field(
          {"fh", Value::Type::integer, "filter rows", Value(std::int64_t{5}), 1, kConv2dMaxFilter})
      .key_field({"fw", Value::Type::integer, "filter columns", Value(std::int64_t{5}), 1,
                  kConv2dMaxFilter})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key([](const ClConv2dArgs& a) {
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
        return ClConv2dArgs{
            std::make_shared<Conv2dState>(context, make_conv2d_host(key, input_set))};
      })
      // The Args are a handle: copying them would restore nothing on the device.
      .restore([](ClConv2dArgs& a) { a.state->upload_inputs(); })
      .outputs([](ClConv2dArgs& a) {
        a.state->out.read();
        return std::vector<OutputView>{OutputView::of(std::span(a.state->host.out))};
      })
      .reference([](ClConv2dArgs& a) {
        conv2d_reference(a.state->host);
        a.state->out.write();
      })
      // A sum of fh·fw products of values in [-1, 1): as sgemm's k-term dot products.
      .tolerance([](const Key& key) {
        const double terms = static_cast<double>(key.integer("fh") * key.integer("fw"));
        return Tolerance{0x1p-20 * terms, 0x1p-17};
      });

  auto step = std::make_shared<BuildStep>(context, opencl_sources::conv2d, "conv2d");
  op->space(conv2d_space(),
            [](const Config& config) -> std::function<void(ClConv2dArgs&)> {
              return [config, bx = param(config, "BX"), by = param(config, "BY"),
                      tx = param(config, "TX"), ty = param(config, "TY")](ClConv2dArgs& a) {
                Conv2dState& s = *a.state;
                s.out.before_launch();
                opencl::Kernel& k = s.kernels.get(
                    opencl_sources::conv2d, filter_options(config, s.host.fh, s.host.fw), "conv2d");
                k.set_arg(0, static_cast<int>(s.wp));
                k.set_arg(1, s.in);
                k.set_arg(2, s.filter);
                k.set_arg(3, s.out.buffer());
                const std::size_t global[2] = {s.wp / (bx * tx) * bx, s.hp / (by * ty) * by};
                const std::size_t local[2] = {bx, by};
                k.launch(global, local);
              };
            })
      .numerics([](const Config&) { return Numerics::reassociates; })
      // The filter size (a key field) joins the build options: the build takes the key.
      .build([step](const Key& key, const Config& config) {
        const std::size_t bx = param(config, "BX"), by = param(config, "BY");
        const std::size_t tile_w = bx * param(config, "TX"), tile_h = by * param(config, "TY");
        const std::size_t local[2] = {bx, by};
        const auto fh = static_cast<std::size_t>(key.integer("fh"));
        const auto fw = static_cast<std::size_t>(key.integer("fw"));
        // One work-group over a one-tile image: input, filter and output inside the scratch.
        return (*step)(filter_options(config, fh, fw), local,
                       (tile_h + fh) * (tile_w + fw) * sizeof(float),
                       [tile_w](opencl::Kernel& k, opencl::Buffer& scratch) {
                         k.set_arg(0, static_cast<int>(tile_w));
                         k.set_arg(1, scratch);
                         k.set_arg(2, scratch);
                         k.set_arg(3, scratch);
                       });
      })
      .default_config(Config{{"BX", 16}, {"BY", 4}, {"TX", 1}, {"TY", 1}, {"SL", 0}});
  return op;
}

}  // namespace tunekit::kernels::cl
