#include "workload_env/env_file.h"

#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/text.h"

namespace provision {

std::string shell_quote(const std::string& value) {
    std::string quoted = "'";
    for (const char c : value) {
        if (c == '\'') quoted += "'\\''";
        else quoted += c;
    }
    quoted += "'";
    return quoted;
}

std::string render_env_file(const EnvSettings& settings, const std::string& header_comment) {
    std::ostringstream out;
    std::istringstream header(header_comment);
    for (std::string line; std::getline(header, line);) out << "# " << line << "\n";
    for (const auto& [name, value] : settings.entries()) {
        if (value.find('\0') != std::string::npos)
            throw Error(ExitCode::invalid_input, fmt::format("the value of {} holds a NUL byte", name));
        out << "export " << name << "=" << shell_quote(value) << "\n";
    }
    return out.str();
}

void write_env_file_atomically(const std::string& path, const std::string& contents, bool create_folders) {
    const auto failure = write_file_atomically(path, contents, {.mode = 0644, .create_folders = create_folders});
    if (!failure) return;
    if (failure->refused())
        throw Error(ExitCode::io_failure,
                    fmt::format("will not write the env file {}: {}, and is left as it is "
                                "(an env file replaces only a regular file; --env-file {} discards the settings)",
                                echoed_path(path), failure->message(), kDiscardedEnvFile));
    throw Error(ExitCode::io_failure,
                fmt::format("cannot write the env file {}: {} (the previous file, if any, is unchanged)",
                            echoed_path(path), failure->message()));
}

}  // namespace provision
