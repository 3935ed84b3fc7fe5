// The polynomial exp shared by softmax's two_pass_poly (scalar, auto-vectorised) and the
// streaming attention kernel (16-lane vectors): x = k·ln2 + r, exp(r) by a degree-7 minimax
// polynomial (Cephes expf), 2^k from the bits. Private to kernels/.
#pragma once

namespace tunekit::kernels::exp_poly {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kShifter = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
inline constexpr float kLn2Hi = 0.693359375f;   // ln 2 in two parts: k·kLn2Hi is exact
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kMin = -88.0f;  // clamp: k stays in [-127, 0], 2^k's bits stay valid

// exp(r) for |r| <= ln2/2, for float or a vector of floats (T{} + c broadcasts c).
template <class T>
inline T of_reduced(const T& r) {
  T p = T{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}

}  // namespace tunekit::kernels::exp_poly
