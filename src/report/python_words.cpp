#include "report/python_words.h"

namespace provision {

const char* environment_name(EnvironmentKind kind) {
    switch (kind) {
        case EnvironmentKind::venv: return "venv";
        case EnvironmentKind::conda: return "conda";
        case EnvironmentKind::system: return "system";
        case EnvironmentKind::none: break;
    }
    return "none";
}

// DESIGN.md's words for the JSON report.
const char* source_name(InterpreterSource source) {
    switch (source) {
        case InterpreterSource::option: return "option";
        case InterpreterSource::command: return "command";
        case InterpreterSource::virtual_env: return "VIRTUAL_ENV";
        case InterpreterSource::conda_prefix: return "CONDA_PREFIX";
        case InterpreterSource::path: return "PATH";
        case InterpreterSource::recipes: return "recipes";
        case InterpreterSource::site_packages: break;
    }
    return "site-packages";
}

// The same, for people.
const char* source_words(InterpreterSource source) {
    switch (source) {
        case InterpreterSource::option: return "given by --python / PROVISION_PYTHON";
        case InterpreterSource::command: return "the COMMAND's interpreter";
        case InterpreterSource::virtual_env: return "from VIRTUAL_ENV";
        case InterpreterSource::conda_prefix: return "from CONDA_PREFIX";
        case InterpreterSource::path: return "found on PATH";
        case InterpreterSource::recipes: return "none found; read the recipes' site-packages folders";
        case InterpreterSource::site_packages: break;
    }
    return "folders given by --site-packages";
}

}  // namespace provision
