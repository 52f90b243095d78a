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

// The two maxima behind the error over a part of an output.  Parts merge
// exactly, in any order (a maximum is a maximum), so a large output can be
// judged in chunks on several threads and give what one pass gives.
struct ErrorExtent {
    double worst = 0;  // max |out - ref|
    double scale = 0;  // max |ref|
    bool nan = false;

    void add(double out, double ref) {
        const double difference = std::fabs(out - ref);
        const double magnitude = std::fabs(ref);
        nan = nan || std::isnan(difference) || std::isnan(magnitude);
        worst = difference > worst ? difference : worst;
        scale = magnitude > scale ? magnitude : scale;
    }
    void merge(const ErrorExtent& other) {
        nan = nan || other.nan;
        worst = other.worst > worst ? other.worst : worst;
        scale = other.scale > scale ? other.scale : scale;
    }
    // max |out - ref| / max |ref|; NaN where either held a NaN.
    double error() const {
        if (nan) return NAN;
        if (scale == 0) return worst == 0 ? 0 : INFINITY;
        return worst / scale;
    }
};

// Out and Ref: anything with size() and operator[] giving numbers (a
// vector, a span, a view decoding stored bits).
template <typename Out, typename Ref>
double relative_error(const Out& out, const Ref& ref) {
    if (out.size() != ref.size() || ref.empty()) return NAN;
    ErrorExtent extent;
    for (std::size_t i = 0; i < ref.size(); ++i) extent.add(static_cast<double>(out[i]), static_cast<double>(ref[i]));
    return extent.error();
}

// The bound a kernel is held to, from the error of the input-precision
// reference (see the rule above).
double tolerance_from(double input_precision_error, double floor);

// True when the error is a number within the tolerance.
bool within_tolerance(double error, double tolerance);

}  // namespace provision::kernels
