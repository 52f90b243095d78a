#include "handoff/handoff.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace provision {
namespace {

// "--flag" or "--flag=value" given by the user counts as "--flag".
bool user_gave(const std::vector<std::string>& command, const std::string& flag) {
    return std::any_of(command.begin() + (command.empty() ? 0 : 1), command.end(), [&](const std::string& arg) {
        return arg == flag || (arg.size() > flag.size() && arg.compare(0, flag.size(), flag) == 0 &&
                               arg[flag.size()] == '=');
    });
}

}  // namespace

std::vector<std::string> workload_arguments(const WorkloadSpec& workload, const std::string& mechanism,
                                            const std::vector<std::string>& command) {
    const auto it = workload.arguments.find(mechanism);
    if (it == workload.arguments.end()) return {};
    for (const auto& flag : workload.conflicting_arguments)
        if (user_gave(command, flag)) return {};
    std::vector<std::string> added;
    for (const auto& flag : it->second)
        if (!flag.starts_with("-") || !user_gave(command, flag)) added.push_back(flag);
    return added;
}

void exec_workload(const std::vector<std::string>& command, const EnvSettings& settings) {
    if (command.empty()) throw Error(ExitCode::usage, "no command to run after '--'");
    for (const auto& [name, value] : settings.entries()) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int error = errno;
    if (error == ENOENT)
        throw Error(ExitCode::command_not_found,
                    fmt::format("{}: command not found (searched PATH={})", command[0],
                                std::getenv("PATH") ? std::getenv("PATH") : ""));
    throw Error(ExitCode::cannot_execute, fmt::format("{}: cannot execute: {}", command[0], std::strerror(error)));
}

}  // namespace provision
