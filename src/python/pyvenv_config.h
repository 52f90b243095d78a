// A venv's pyvenv.cfg (PEP 405): "key = value" lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "python/python_version.h"

namespace provision {

struct PyvenvConfig {
    std::string home;                        // the base interpreter's folder
    // site.py's default when the key is missing: "true" (only the value
    // "true", in any case, keeps it).
    bool include_system_site_packages = true;
    std::optional<PythonVersion> version;    // version_info (uv, virtualenv) or version (venv)
};

// Keys compare without regard to case; unknown keys and lines without '='
// are ignored, so this never fails.
PyvenvConfig parse_pyvenv_config(std::string_view text);

}  // namespace provision
