// The Python the workload will run and the folders its packages are read
// from: the one answer the selection needs about Python.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "python/interpreter_locator.h"
#include "python/python_environment.h"
#include "python/python_version.h"

namespace provision {

struct WorkloadPython {
    std::string executable;                  // "" when none was found or asked for
    std::optional<PythonVersion> version;
    EnvironmentKind environment = EnvironmentKind::none;
    InterpreterSource source = InterpreterSource::recipes;
    std::vector<std::string> site_packages;  // the folders to read, in sys.path order
    std::vector<std::string> notes;
};

struct PythonQuery {
    std::string python;                      // --python / PROVISION_PYTHON
    std::string python_option_name = "--python";
    std::vector<std::string> site_packages;  // --site-packages: exactly these folders
    std::vector<std::string> recipe_globs;   // the recipes' python.site_packages
    std::vector<std::string> command;
    std::map<std::string, std::string> environment;
};

// --site-packages wins and is read as given (an interpreter given with it
// still tells the version the compiled packages must match); else the
// interpreter DESIGN.md's order finds and its environment's folders; else
// the recipes' globs.  Throws Error(usage) for a --python that names nothing.
WorkloadPython find_workload_python(const PythonQuery& query);

}  // namespace provision
