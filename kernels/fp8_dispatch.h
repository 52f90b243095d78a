// The fp8 GEMM kernels are templates on their two operand formats: this
// turns the pair known at run time into one of the four instantiations.
// Plain C++, no CUDA header.
#pragma once

#include <type_traits>

#include "numeric_formats.h"

namespace provision::kernels::detail {

template <Fp8Format F>
using Fp8FormatTag = std::integral_constant<Fp8Format, F>;

// call(Fp8FormatTag<A>{}, Fp8FormatTag<B>{}) for a_format = A, b_format = B;
// the tags' ::value are the formats as constants.
template <typename Call>
decltype(auto) with_fp8_formats(Fp8Format a_format, Fp8Format b_format, Call&& call) {
    constexpr Fp8Format e4m3 = Fp8Format::e4m3, e5m2 = Fp8Format::e5m2;
    if (a_format == e4m3 && b_format == e4m3) return call(Fp8FormatTag<e4m3>{}, Fp8FormatTag<e4m3>{});
    if (a_format == e4m3) return call(Fp8FormatTag<e4m3>{}, Fp8FormatTag<e5m2>{});
    if (b_format == e4m3) return call(Fp8FormatTag<e5m2>{}, Fp8FormatTag<e4m3>{});
    return call(Fp8FormatTag<e5m2>{}, Fp8FormatTag<e5m2>{});
}

}  // namespace provision::kernels::detail
