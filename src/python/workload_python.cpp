#include "python/workload_python.h"

#include "packages/site_packages.h"

namespace provision {
namespace {

void take_environment(const LocatedInterpreter& interpreter, const std::map<std::string, std::string>& environment,
                      WorkloadPython& python) {
    PythonEnvironment found = read_python_environment(interpreter, environment);
    python.executable = interpreter.executable;
    python.source = interpreter.source;
    python.version = found.version;
    python.environment = found.kind;
    python.site_packages = std::move(found.site_packages);
    python.notes.insert(python.notes.end(), found.notes.begin(), found.notes.end());
}

}  // namespace

WorkloadPython find_workload_python(const PythonQuery& query) {
    WorkloadPython python;
    InterpreterSearch search{query.python, query.python_option_name, query.command, query.environment};
    if (!query.site_packages.empty()) {
        if (!query.python.empty()) {
            const InterpreterLocation location = locate_interpreter(search);
            take_environment(*location.interpreter, query.environment, python);
        }
        python.source = InterpreterSource::site_packages;
        python.site_packages = query.site_packages;
        return python;
    }
    InterpreterLocation location = locate_interpreter(search);
    python.notes = std::move(location.notes);
    if (location.interpreter) {
        take_environment(*location.interpreter, query.environment, python);
        return python;
    }
    python.source = InterpreterSource::recipes;
    python.site_packages = expand_site_package_globs(query.recipe_globs);
    python.notes.push_back("no Python interpreter found (no --python, COMMAND interpreter, VIRTUAL_ENV, "
                           "CONDA_PREFIX, or python3 on PATH): reading the recipes' site-packages folders");
    return python;
}

}  // namespace provision
