#include "tolerance.h"

namespace provision::kernels {

double tolerance_from(double input_precision_error, double floor) {
    if (!std::isfinite(input_precision_error)) return NAN;  // a broken reference proves nothing
    return kToleranceFactor * input_precision_error + floor;
}

bool within_tolerance(double error, double tolerance) {
    return std::isfinite(error) && std::isfinite(tolerance) && error <= tolerance;
}

}  // namespace provision::kernels
