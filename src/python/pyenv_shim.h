// pyenv's shims (PYENV_ROOT/shims/python3) are shell scripts that pick a
// version at run time; the interpreter behind one is worked out the way
// pyenv does it, from files and the environment.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace provision {

struct ShimTarget {
    std::string executable;  // PYENV_ROOT/versions/3.11.7/bin/python3
    std::string chosen_by;   // "PYENV_VERSION", "/app/.python-version", "/root/.pyenv/version"
};

// nullopt when `executable` is no pyenv shim, or names the "system" Python
// or a version that is not installed (the shim then stays as found).
// The version comes from PYENV_VERSION, else the nearest .python-version
// from `cwd` upward, else PYENV_ROOT/version.
std::optional<ShimTarget> resolve_pyenv_shim(const std::string& executable,
                                             const std::map<std::string, std::string>& environment,
                                             const std::string& cwd);

}  // namespace provision
