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

// The environment of `interpreter`, in the order CPython's site module
// builds sys.path (checked against a real CPython by
// tests/e2e/python_sys_path_test.cpp):
// 1. PYTHONPATH's entries (unless -E or -I), made absolute;
// 2. a venv's own folders, when a pyvenv.cfg (a regular file) sits beside
//    the executable or one folder up, decided from the path as given
//    (bin/python3 is usually a link to the base interpreter);
// 3. the user site (PYTHONUSERBASE or HOME/.local), unless -s, -I,
//    PYTHONNOUSERSITE or a venv without the system's packages;
// 4. the installation's folders: a venv's base (pyvenv.cfg's home) when
//    include-system-site-packages is true or missing, a conda prefix (with
//    conda-meta/), or the resolved executable's prefix; Debian's layout
//    where the prefix has it (python/site_layout.h).
// With -S only the first.  The version comes from pyvenv.cfg or the file
// name (following links); where neither tells, every lib/python3.N folder is
// read and a note says so.
PythonEnvironment read_python_environment(const LocatedInterpreter& interpreter,
                                          const std::map<std::string, std::string>& environment);

}  // namespace provision
