// fmt's implementation (its format-inl.h), compiled once for the whole
// project. Debian's libfmt-dev ships it as libfmt.so alone, and provision
// must not need that at run time; FMT_HEADER_ONLY would compile it again in
// every file that includes <fmt/format.h> (about 3.5 s a file in a sanitizer
// build). What fmt's own src/format.cc does: the definitions, and the
// templates that <fmt/format.h> declares `extern template` outside
// FMT_HEADER_ONLY.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
