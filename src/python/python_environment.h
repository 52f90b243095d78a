// Which folders an interpreter imports packages from, worked out from its
// path and a few small files, without running it (PEP 405 for venvs,
// CPython's site module for the user site; docs/DESIGN.md, "The workload's
// Python").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "python/interpreter_locator.h"
#include "python/python_version.h"

namespace provision {

enum class EnvironmentKind { venv, conda, system, none };

struct PythonEnvironment {
    EnvironmentKind kind = EnvironmentKind::none;
    std::string root;                        // the venv's folder, the conda prefix or the install prefix
    std::optional<PythonVersion> version;    // nullopt: neither pyvenv.cfg nor a file name tells
    std::vector<std::string> site_packages;  // existing folders in sys.path order
    std::vector<std::string> notes;
};

// The environment of `interpreter`:
// - a venv when a pyvenv.cfg sits beside the executable or one folder up,
//   decided from the path as given (bin/python3 is usually a link to the
//   base interpreter); include-system-site-packages = true adds the base
//   interpreter's folders (pyvenv.cfg's home);
// - conda when its prefix has a conda-meta/ folder;
// - else a system layout under the resolved executable's prefix (Debian's
//   dist-packages folders included).
// In front of these come PYTHONPATH's entries and the user site
// (PYTHONUSERBASE or HOME/.local) where the interpreter would read them.
// The version comes from pyvenv.cfg or the file name (following links);
// where neither tells, every lib/python3.* folder is read and a note says so.
PythonEnvironment read_python_environment(const LocatedInterpreter& interpreter,
                                          const std::map<std::string, std::string>& environment);

}  // namespace provision
