// pyenv's shims (PYENV_ROOT/shims/python3) are shell scripts that pick a
// version at run time; the interpreter behind one is worked out the way
// pyenv does it (pyenv-version-file, pyenv-version-file-read, pyenv-which),
// from files and the environment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace provision {

struct ShimTarget {
    std::string executable;  // PYENV_ROOT/versions/3.11.7/bin/python3
    std::string chosen_by;   // "PYENV_VERSION", "/app/.python-version", "/root/.pyenv/version"
};

struct PyenvChoice {
    std::optional<ShimTarget> target;  // nullopt: no shim, "system", or no version named is installed
    std::vector<std::string> notes;    // versions refused as pyenv refuses them, none installed, ...
};

// The versions come from PYENV_VERSION (colon-separated), else the nearest
// .python-version (a regular file) from `cwd` upward, else
// PYENV_ROOT/version.  A version file gives the first word of each line,
// skipping blank lines and "#" comments; a version that is ".." or holds a
// "/" is refused (pyenv's guard against CVE-2022-35861).  The first version
// that has the shim's command installed is chosen.
PyenvChoice resolve_pyenv_shim(const std::string& executable, const std::map<std::string, std::string>& environment,
                               const std::string& cwd);

// The versions a version file names, as pyenv-version-file-read reads it.
std::vector<std::string> read_pyenv_version_file(std::string_view text);

}  // namespace provision
