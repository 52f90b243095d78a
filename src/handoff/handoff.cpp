#include "handoff/handoff.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/termination.h"
#include "core/text.h"

namespace provision {
namespace {

// "-x", "--x"; "-1" is a value.
bool is_flag(const std::string& arg) {
    return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1]));
}

// "--flag=value" names "--flag".
std::string flag_name(const std::string& arg) { return arg.substr(0, arg.find('=')); }

// "--flag" or "--flag=value" given by the user counts as "--flag".  The
// program's own name (command[0]) is no argument.
bool user_gave(const std::vector<std::string>& command, const std::string& flag) {
    return std::any_of(command.begin() + (command.empty() ? 0 : 1), command.end(),
                       [&](const std::string& arg) { return is_flag(arg) && flag_name(arg) == flag; });
}

// Where execvp found `program`: itself when it holds a '/', else the first
// entry of `search_path` (PATH) that has it.  Empty when no such file exists.
std::string located(const std::string& program, std::string_view search_path) {
    if (program.find('/') != std::string::npos) return ::access(program.c_str(), F_OK) == 0 ? program : "";
    std::string_view rest = search_path;
    while (true) {
        const auto colon = rest.find(':');
        std::string folder(rest.substr(0, colon));
        const std::string candidate = (folder.empty() ? std::string(".") : folder) + "/" + program;
        if (::access(candidate.c_str(), F_OK) == 0) return candidate;
        if (colon == std::string_view::npos) return "";
        rest.remove_prefix(colon + 1);
    }
}

// The interpreter a "#!" line names, or empty when the file has none.
std::string interpreter_of(const std::string& file) {
    std::string error;
    const auto head = read_regular_file(file, 256, error, true);
    if (!head || !head->starts_with("#!")) return "";
    const std::string line = head->substr(2, head->find('\n') - 2);
    const std::string name = trimmed(line, " \t\r");
    return name.substr(0, name.find_first_of(" \t"));
}

}  // namespace

namespace {

// `flags` minus those the user gave.  A flag and the values that follow it
// are one unit: added whole, or left out whole when the user gave the flag,
// so no stray value is left.
void add_flags_not_given(const std::vector<std::string>& flags, const std::vector<std::string>& command,
                         std::vector<std::string>& added) {
    bool skipping = false;
    for (const auto& arg : flags) {
        if (is_flag(arg)) skipping = user_gave(command, flag_name(arg));
        if (!skipping) added.push_back(arg);
    }
}

}  // namespace

std::vector<std::string> workload_arguments(const WorkloadSpec& workload, const std::string& mechanism,
                                            const std::string& dtype, const std::vector<std::string>& command) {
    std::vector<std::string> added;
    const auto it = workload.arguments.find(mechanism);
    const bool conflicting = std::any_of(workload.conflicting_arguments.begin(), workload.conflicting_arguments.end(),
                                         [&](const std::string& flag) { return user_gave(command, flag); });
    if (it != workload.arguments.end() && !conflicting) add_flags_not_given(it->second, command, added);
    if (const auto dtype_flags = workload.dtype_arguments.find(dtype); dtype_flags != workload.dtype_arguments.end())
        add_flags_not_given(dtype_flags->second, command, added);
    return added;
}

void exec_workload(const std::vector<std::string>& command, const EnvSettings& settings, std::string search_path) {
    if (command.empty()) throw Error(ExitCode::usage, "no command to run after '--'");
    for (const auto& [name, value] : settings.entries()) {
        ::setenv(name.c_str(), value.c_str(), 1);
        if (name == "PATH") search_path = value;  // what execvp searches now
    }
    std::vector<char*> argv;
    for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    restore_default_signals();  // the workload starts with normal signal handling
    ::execvp(argv[0], argv.data());
    const int error = errno;
    install_termination_handlers();  // still provision: a signal must still stop it as before
    // ENOENT for a file that exists: its "#!" interpreter is missing, as a
    // shell says "bad interpreter" (and exits 126).
    if (const std::string file = error == ENOENT ? located(command[0], search_path) : ""; !file.empty()) {
        const std::string interpreter = interpreter_of(file);
        throw Error(ExitCode::cannot_execute,
                    interpreter.empty()
                        ? fmt::format("{}: cannot execute: {}", printable(command[0]), std::strerror(error))
                        : fmt::format("{}: bad interpreter: {}: {}", printable(command[0]), printable(interpreter),
                                      std::strerror(error)));
    }
    // A name with a '/' is a path, which execvp takes as it is: PATH is not searched.
    if (error == ENOENT && command[0].find('/') != std::string::npos)
        throw Error(ExitCode::command_not_found, fmt::format("{}: no such file", printable(command[0])));
    if (error == ENOENT)
        throw Error(ExitCode::command_not_found,
                    fmt::format("{}: command not found (searched PATH={})", printable(command[0]),
                                printable(search_path)));
    throw Error(ExitCode::cannot_execute,
                fmt::format("{}: cannot execute: {}", printable(command[0]), std::strerror(error)));
}

}  // namespace provision
