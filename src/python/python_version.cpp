#include "python/python_version.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace provision {
namespace {

// Reads a run of digits at `text`'s front; nullopt when there is none.
std::optional<int> take_number(std::string_view& text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end == text.data()) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return value;
}

}  // namespace

std::string PythonVersion::str() const { return fmt::format("{}.{}", major, minor); }

std::optional<PythonVersion> PythonVersion::parse(std::string_view text) {
    const auto major = take_number(text);
    if (!major || text.empty() || text.front() != '.') return std::nullopt;
    text.remove_prefix(1);
    const auto minor = take_number(text);
    if (!minor) return std::nullopt;
    // What follows must end the number: "3.12", "3.12.3", "3.12.0rc1".
    if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
    return PythonVersion{*major, *minor};
}

std::optional<PythonVersion> PythonVersion::from_file_name(std::string_view name) {
    if (!name.starts_with("python")) return std::nullopt;
    name.remove_prefix(6);
    const auto version = parse(name);
    if (!version) return std::nullopt;
    // Exactly "pythonX.Y": no suffix such as "-config" or "t".
    return name == version->str() ? version : std::nullopt;
}

bool is_python_name(std::string_view name) {
    return name == "python" || name == "python3" || PythonVersion::from_file_name(name).has_value();
}

}  // namespace provision
