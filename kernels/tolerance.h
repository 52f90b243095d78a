// How a kernel's output is judged against its reference.
//
// Error: max |out - ref| / max |ref| over the whole output (a max-norm
// relative error, well defined where single elements are near zero).  A NaN
// in either makes the error NaN, which never passes.
//
// Rule: a fast kernel passes when its error against a high-precision
// reference is at most twice the error that the same computation, done
// plainly in the kernel's input precision, makes against that reference,
// plus a small floor for the rounding of the high-precision reference itself:
//     error(kernel) <= 2 * error(input-precision reference) + floor
// The input-precision error measures how much rounding the data type allows
// for these very inputs, so the bound tightens and loosens with the shape
// and the distribution instead of being a guessed constant.
#pragma once

#include <cmath>
#include <cstddef>

namespace provision::kernels {

inline constexpr double kToleranceFactor = 2.0;

// Out and Ref: anything with size() and operator[] giving numbers (a
// vector, a span, a view decoding stored bits).
template <typename Out, typename Ref>
double relative_error(const Out& out, const Ref& ref) {
    if (out.size() != ref.size() || ref.empty()) return NAN;
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double difference = std::fabs(static_cast<double>(out[i]) - static_cast<double>(ref[i]));
        const double magnitude = std::fabs(static_cast<double>(ref[i]));
        if (std::isnan(difference) || std::isnan(magnitude)) return NAN;
        worst = difference > worst ? difference : worst;
        scale = magnitude > scale ? magnitude : scale;
    }
    if (scale == 0) return worst == 0 ? 0 : INFINITY;
    return worst / scale;
}

// The bound a kernel is held to, from the error of the input-precision
// reference (see the rule above).
double tolerance_from(double input_precision_error, double floor);

// True when the error is a number within the tolerance.
bool within_tolerance(double error, double tolerance);

}  // namespace provision::kernels
