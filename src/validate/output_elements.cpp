// Element access and poisoning for every OutputView type.
#include "validate/output_elements.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tunekit::detail {
namespace {

template <class T>
void fill(void* data, std::size_t count, T value) {
  T* p = static_cast<T*>(data);
  for (std::size_t i = 0; i < count; ++i) p[i] = value;
}

template <class T>
T at(const OutputView& view, std::size_t i) {
  return static_cast<const T*>(view.data)[i];
}

}  // namespace

double f16_to_double(std::uint16_t bits) {
  const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  }
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // zero and subnormals
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

double bf16_to_double(std::uint16_t bits) {
  // bfloat16 is the high half of an f32: widening is exact, NaN and infinity included.
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

double float_element(const OutputView& view, std::size_t i) {
  switch (view.type) {
    case OutputView::Type::f32:
      return static_cast<double>(at<float>(view, i));
    case OutputView::Type::f64:
      return at<double>(view, i);
    case OutputView::Type::f16:
      return f16_to_double(at<std::uint16_t>(view, i));
    case OutputView::Type::bf16:
      return bf16_to_double(at<std::uint16_t>(view, i));
    default:
      return static_cast<double>(integer_element(view, i));
  }
}

std::int64_t integer_element(const OutputView& view, std::size_t i) {
  switch (view.type) {
    case OutputView::Type::i32:
      return at<std::int32_t>(view, i);
    case OutputView::Type::i64:
      return at<std::int64_t>(view, i);
    case OutputView::Type::u8:
      return at<std::uint8_t>(view, i);
    default:
      return static_cast<std::int64_t>(float_element(view, i));
  }
}

std::size_t element_size(OutputView::Type type) {
  switch (type) {
    case OutputView::Type::f64:
    case OutputView::Type::i64:
      return 8;
    case OutputView::Type::f32:
    case OutputView::Type::i32:
      return 4;
    case OutputView::Type::f16:
    case OutputView::Type::bf16:
      return 2;
    case OutputView::Type::u8:
      return 1;
  }
  return 1;
}

void poison_view(const OutputView& view) {
  switch (view.type) {
    case OutputView::Type::f32:
      return fill(view.data, view.count, std::numeric_limits<float>::quiet_NaN());
    case OutputView::Type::f64:
      return fill(view.data, view.count, std::numeric_limits<double>::quiet_NaN());
    case OutputView::Type::f16:
      return fill(view.data, view.count, std::uint16_t{0x7e00});  // quiet NaN
    case OutputView::Type::bf16:
      return fill(view.data, view.count, std::uint16_t{0x7fc0});  // quiet NaN
    case OutputView::Type::i32:
    case OutputView::Type::i64:
    case OutputView::Type::u8:
      std::memset(view.data, kIntegerPoisonByte, view.count * element_size(view.type));
      return;
  }
}

std::string_view type_name(OutputView::Type type) {
  switch (type) {
    case OutputView::Type::f32:
      return "f32";
    case OutputView::Type::f64:
      return "f64";
    case OutputView::Type::f16:
      return "f16";
    case OutputView::Type::bf16:
      return "bf16";
    case OutputView::Type::i32:
      return "i32";
    case OutputView::Type::i64:
      return "i64";
    case OutputView::Type::u8:
      return "u8";
  }
  return "?";
}

}  // namespace tunekit::detail
