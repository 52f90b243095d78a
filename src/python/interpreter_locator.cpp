#include "python/interpreter_locator.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"
#include "python/file_probe.h"
#include "python/pyenv_shim.h"
#include "python/python_version.h"
#include "python/shebang.h"

namespace provision {
namespace {

// execvp()'s search path when PATH is unset.
constexpr const char* kDefaultSearchPath = "/bin:/usr/bin";
// Enough for a "#!" line and pip's long-path second line.
constexpr std::size_t kScriptHeadBytes = 1024;

std::string value_of(const std::map<std::string, std::string>& environment, const char* name) {
    const auto it = environment.find(name);
    return it == environment.end() ? std::string() : it->second;
}

std::string search_path_of(const std::map<std::string, std::string>& environment) {
    const auto it = environment.find("PATH");
    return it == environment.end() ? kDefaultSearchPath : it->second;
}

// The interpreter inside an environment's folder: bin/python3, then bin/python.
std::string interpreter_in(const std::string& root) {
    for (const char* name : {"/bin/python3", "/bin/python"})
        if (file_probe::exists(root + name)) return root + name;
    return {};
}

class Locator {
public:
    explicit Locator(const InterpreterSearch& search) : search_(search), path_(search_path_of(search.environment)) {}

    InterpreterLocation run() {
        if (!search_.option.empty()) return found({from_option(), InterpreterSource::option, {}});
        if (auto interpreter = from_command()) return found(*interpreter);
        if (auto interpreter = from_prefix("VIRTUAL_ENV", InterpreterSource::virtual_env)) return found(*interpreter);
        if (auto interpreter = from_prefix("CONDA_PREFIX", InterpreterSource::conda_prefix)) return found(*interpreter);
        for (const char* name : {"python3", "python"}) {
            const std::string executable = find_on_path(name, path_);
            if (!executable.empty()) return found({executable, InterpreterSource::path, {}});
        }
        return std::move(location_);
    }

private:
    InterpreterLocation found(LocatedInterpreter interpreter) {
        // "./python3" (or an empty PATH entry): its venv is found from the
        // absolute path, as CPython finds it from abspath(sys.executable).
        const std::string cwd = file_probe::current_folder();
        interpreter.executable = file_probe::absolute(interpreter.executable, cwd);
        // A pyenv shim is a script; the interpreter it runs is what counts.
        const PyenvChoice choice = resolve_pyenv_shim(interpreter.executable, search_.environment, cwd);
        for (const auto& text : choice.notes) note(text);
        if (choice.target) {
            note(fmt::format("{} is a pyenv shim; {} chooses {}", interpreter.executable, choice.target->chosen_by,
                             choice.target->executable));
            interpreter.executable = choice.target->executable;
        }
        location_.interpreter = std::move(interpreter);
        return std::move(location_);
    }

    // An explicit choice that names nothing is a mistake to stop on, not to
    // work around: the user meant that interpreter.
    std::string from_option() const {
        const std::string& given = search_.option;
        std::string executable = given;
        if (given.find('/') == std::string::npos) executable = find_on_path(given, path_);
        else if (file_probe::is_directory(given)) executable = interpreter_in(given);
        if (!executable.empty() && file_probe::exists(executable) && !file_probe::is_directory(executable))
            return executable;
        throw Error(ExitCode::usage,
                    fmt::format("{} {}: no such Python interpreter (give the one the workload runs, for example "
                                "/opt/venv/bin/python3, or its environment's folder)",
                                search_.option_name, echoed(given)));
    }

    std::optional<LocatedInterpreter> from_command() {
        if (search_.command.empty()) return std::nullopt;
        const std::string& first = search_.command.front();
        const std::vector<std::string> arguments(search_.command.begin() + 1, search_.command.end());
        const bool named_python = is_python_name(file_probe::file_name_of(first));
        const std::string program = first.find('/') == std::string::npos ? find_on_path(first, path_) : first;
        if (program.empty() || !file_probe::exists(program)) {
            if (named_python)
                note(fmt::format("the COMMAND's interpreter {} {}", first,
                                 first.find('/') == std::string::npos ? "is not on the PATH" : "does not exist"));
            return std::nullopt;
        }
        if (named_python) return LocatedInterpreter{program, InterpreterSource::command, interpreter_flags(arguments)};

        const auto head = file_probe::read_head(program, kScriptHeadBytes);
        if (!head) return std::nullopt;
        const auto shebang = parse_shebang(*head);
        if (!shebang || !is_python_name(file_probe::file_name_of(shebang->program))) return std::nullopt;
        const std::string interpreter =
            shebang->through_env ? find_on_path(shebang->program, path_) : shebang->program;
        if (interpreter.empty() || !file_probe::exists(interpreter)) {
            note(fmt::format("{} starts with #!{}{}, which {}", program, shebang->through_env ? "/usr/bin/env " : "",
                             shebang->program,
                             shebang->through_env ? "is not on the PATH" : "does not exist"));
            return std::nullopt;
        }
        return LocatedInterpreter{interpreter, InterpreterSource::command, interpreter_flags(shebang->arguments)};
    }

    std::optional<LocatedInterpreter> from_prefix(const char* variable, InterpreterSource source) {
        const std::string root = value_of(search_.environment, variable);
        if (root.empty()) return std::nullopt;
        std::string executable = interpreter_in(root);
        if (executable.empty()) {
            note(fmt::format("{}={} has no bin/python3 or bin/python", variable, root));
            return std::nullopt;
        }
        return LocatedInterpreter{std::move(executable), source, {}};
    }

    void note(std::string text) { location_.notes.push_back(std::move(text)); }

    const InterpreterSearch& search_;
    const std::string path_;
    InterpreterLocation location_;
};

}  // namespace

InterpreterFlags interpreter_flags(const std::vector<std::string>& arguments) {
    InterpreterFlags flags;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& word = arguments[i];
        if (word.size() < 2 || word[0] != '-' || word == "--") break;
        if (word.starts_with("--")) {
            if (word == "--check-hash-based-pycs") ++i;  // the only long option with a separate value
            continue;
        }
        for (std::size_t c = 1; c < word.size(); ++c) {
            const char option = word[c];
            if (option == 'c' || option == 'm') return flags;  // the rest belongs to the program
            if (option == 'W' || option == 'X') {
                if (c + 1 == word.size()) ++i;  // the value is the next word
                break;
            }
            if (option == 'S') flags.no_site = true;
            if (option == 's') flags.no_user_site = true;
            if (option == 'E') flags.ignore_environment = true;
            if (option == 'I') flags.no_user_site = flags.ignore_environment = true;
        }
    }
    return flags;
}

std::string find_on_path(const std::string& name, const std::string& search_path) {
    if (name.empty()) return {};
    std::size_t at = 0;
    while (at <= search_path.size()) {
        const auto end = search_path.find(':', at);
        const std::string folder = search_path.substr(at, end == std::string::npos ? std::string::npos : end - at);
        const std::string candidate = (folder.empty() ? std::string(".") : folder) + "/" + name;
        if (file_probe::is_executable_file(candidate)) return candidate;
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return {};
}

InterpreterLocation locate_interpreter(const InterpreterSearch& search) { return Locator(search).run(); }

}  // namespace provision
