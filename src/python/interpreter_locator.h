// Finds the Python interpreter that will run the workload, in the order
// DESIGN.md ("The workload's Python") fixes.  Nothing is executed: PATH is
// searched as execvp() would search it, and scripts are read only as far as
// their "#!" line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace provision {

// Where the interpreter was found (or, for the last two, why there is none).
enum class InterpreterSource {
    option,         // --python / PROVISION_PYTHON
    command,        // the COMMAND, or the "#!" line of the script it names
    virtual_env,    // $VIRTUAL_ENV/bin/python3
    conda_prefix,   // $CONDA_PREFIX/bin/python3
    path,           // python3, then python, on PATH
    recipes,        // none found: the recipes' site-packages globs
    site_packages,  // --site-packages: exactly the folders given
};

// Interpreter options that change which folders it reads (CPython's
// sys.flags: no_site, no_user_site, ignore_environment).
struct InterpreterFlags {
    bool no_site = false;             // -S: the site module never runs, so no site-packages at all
    bool no_user_site = false;        // -s or -I
    bool ignore_environment = false;  // -E or -I: PYTHONPATH and PYTHONNOUSERSITE unread (site.py still
                                      // reads PYTHONUSERBASE from os.environ)
};

struct LocatedInterpreter {
    std::string executable;  // absolute (made so against the current folder, as CPython's abspath does),
                             // symlinks not resolved
    InterpreterSource source = InterpreterSource::path;
    InterpreterFlags flags;
};

struct InterpreterSearch {
    std::string option;              // --python / PROVISION_PYTHON; "" when not given
    std::string option_name;         // "--python" or "PROVISION_PYTHON", for messages
    std::vector<std::string> command;  // the COMMAND and its arguments
    std::map<std::string, std::string> environment;  // the workload's environment
};

struct InterpreterLocation {
    std::optional<LocatedInterpreter> interpreter;  // nullopt: none found
    std::vector<std::string> notes;                 // a source that named a missing interpreter, ...
};

// The first source that gives an existing interpreter wins; one that names
// a missing interpreter is skipped with a note.  Throws Error(usage) when
// the interpreter given by the option does not exist.
InterpreterLocation locate_interpreter(const InterpreterSearch& search);

// The flags among an interpreter's leading options ("-S", "-s", "-I", "-sE",
// ...), up to its first argument that is no option.
InterpreterFlags interpreter_flags(const std::vector<std::string>& arguments);

// `name` looked up on `search_path` as execvp() does ("" entries mean the
// current folder); "" when no executable file of that name is found.
std::string find_on_path(const std::string& name, const std::string& search_path);

}  // namespace provision
