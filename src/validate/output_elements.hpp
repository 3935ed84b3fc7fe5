// Reading and poisoning the elements of an OutputView, whatever its type. Private to
// src/validate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tunekit/op.hpp"

namespace tunekit::detail {

// What an integer output is filled with before a candidate runs: the byte 0xA5 repeated, a
// value a correct kernel is unlikely to produce where it writes nothing.
inline constexpr std::uint8_t kIntegerPoisonByte = 0xA5;

// The exact value of a 16-bit pattern as a number (every f16 and bf16 value is a double).
double f16_to_double(std::uint16_t bits);
double bf16_to_double(std::uint16_t bits);

// Element i of a floating output (f32, f64, f16, bf16), exactly, in double.
double float_element(const OutputView& view, std::size_t i);
// Element i of an integer output (i32, i64, u8), exactly.
std::int64_t integer_element(const OutputView& view, std::size_t i);

// Bytes per element.
std::size_t element_size(OutputView::Type type);
// Quiet NaN in every element of a floating output, the sentinel in every byte of an integer
// output.
void poison_view(const OutputView& view);

std::string_view type_name(OutputView::Type type);

}  // namespace tunekit::detail
