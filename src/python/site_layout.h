// The site-packages folders an installation prefix adds to sys.path, as
// its site module's getsitepackages() lists them.  Two layouts exist in the
// images provision runs in: CPython's own (python.org builds, conda, uv's
// and pyenv's Pythons, the python:3.X images) and Debian's patched site.py
// (Debian's and Ubuntu's /usr/bin/python3, so NGC images).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "python/python_version.h"

namespace provision {

enum class SiteLayout {
    cpython,  // PREFIX/lib/python3.Y/site-packages
    debian,   // PREFIX/local/lib/python3.Y/dist-packages, PREFIX/lib/python3/dist-packages,
              // PREFIX/lib/python3.Y/dist-packages (site-packages first inside a venv)
};

// Debian's layout when the base installation `prefix` has Debian's own
// folder for it (PREFIX/lib/python3/dist-packages, or PREFIX/local/lib/
// python3.Y/dist-packages that pip writes there); CPython's otherwise.
SiteLayout site_layout_of(const std::string& prefix, const std::optional<PythonVersion>& version);

// The candidate folders of `prefix`, in getsitepackages() order, existing
// or not.  `in_venv`: the interpreter runs in a virtual environment, where
// Debian's site.py puts lib/python3.Y/site-packages first.  With the version
// unknown, every lib/python3.N folder there is taken (listed literally:
// a path is never a pattern).
std::vector<std::string> prefix_site_folders(const std::string& prefix, SiteLayout layout, bool in_venv,
                                             const std::optional<PythonVersion>& version);

// "lib/python3.12", or with the version unknown every "lib/python3.N"
// folder that exists, sorted.
std::vector<std::string> version_folders(const std::string& lib, const std::optional<PythonVersion>& version);

}  // namespace provision
