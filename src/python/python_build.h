// Which Python a distribution's compiled extensions were built for, read
// from its .dist-info: the wheel tags in WHEEL, else the "cpython-3XY"
// part of the extension module names listed in RECORD.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python/python_version.h"

namespace provision {

struct PythonBuild {
    std::vector<PythonVersion> versions;       // built for exactly these (cp310-cp310, .cpython-310-...so)
    std::optional<PythonVersion> stable_abi;   // cp3XY-abi3: this version or newer
    std::string evidence;                      // "WHEEL tag cp310-cp310-linux_x86_64", "RECORD lists ....so"

    // Whether an interpreter of `version` can import the extensions.
    bool imports_on(PythonVersion version) const;
    std::string describe() const;  // "Python 3.10", "Python 3.10 or 3.11", "Python 3.9 or newer"
};

// From WHEEL's "Tag:" lines; nullopt when no tag names a CPython ABI
// (py3-none-any, or no tag at all).
std::optional<PythonBuild> python_build_from_wheel(std::string_view wheel);

// From RECORD's paths: the first "NAME.cpython-3XY[-platform].so" decides.
std::optional<PythonBuild> python_build_from_record(std::string_view record);

// Reads DIST_INFO/WHEEL, then (only when WHEEL does not tell) DIST_INFO/RECORD.
// nullopt for pure-Python distributions, .egg-info folders and unreadable files:
// missing evidence is no mismatch.
std::optional<PythonBuild> read_python_build(const std::string& dist_info);

}  // namespace provision
