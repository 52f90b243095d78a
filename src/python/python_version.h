// A Python feature version (3.12): what decides which site-packages folder
// an interpreter reads and which compiled extensions it can import.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace provision {

struct PythonVersion {
    int major = 3;
    int minor = 0;

    std::string str() const;  // "3.12"
    auto operator<=>(const PythonVersion&) const = default;

    // "3.12", "3.12.3", "3.12.3.final.0" (pyvenv.cfg's version_info).
    static std::optional<PythonVersion> parse(std::string_view text);
    // An interpreter's file name: "python3.12" gives 3.12; "python3",
    // "python" and anything else give nothing.
    static std::optional<PythonVersion> from_file_name(std::string_view name);
};

// Whether `name` is a Python interpreter's file name: python, python3 or
// python3.N.
bool is_python_name(std::string_view name);

}  // namespace provision
