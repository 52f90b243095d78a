// Fuzz target: the env file writer.  The input is records separated by the
// byte 0x1E: the first is the header comment, each further one NAME=VALUE.
//
// Checks that EnvSettings takes exactly the shell variable names, that a
// value with a NUL byte is refused, and that what render_env_file writes,
// read back with sh's rules, gives exactly the names and values set.  The
// reading is an in-process parser of the only grammar the writer may use
// (comment lines, then `export NAME=` and a word made of '...' segments and
// \' escapes), so the fuzzer needs no process per input; the regression
// test also sources the file with the real sh and bash (Shells::real).
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "workload_env/env_file.h"
#include "fuzz/fuzz_support.h"

namespace fuzz::env_file {

using Entries = std::vector<std::pair<std::string, std::string>>;

enum class Shells { in_process, real };

// [A-Za-z_][A-Za-z0-9_]*, written again here so the two can disagree.
inline bool shell_name(std::string_view name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    for (const char c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

// Reads the env file as sh would, accepting only the writer's grammar;
// nullopt when the text strays from it (an unquoted character, an
// unterminated quote, a line that is neither a comment nor an export).
inline std::optional<Entries> read_as_sh(std::string_view text) {
    Entries entries;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '#') {  // a comment runs to the end of the line
            const std::size_t end = text.find('\n', i);
            if (end == std::string_view::npos) return std::nullopt;
            i = end + 1;
            continue;
        }
        constexpr std::string_view keyword = "export ";
        if (text.substr(i, keyword.size()) != keyword) return std::nullopt;
        i += keyword.size();
        const std::size_t equals = text.find('=', i);
        if (equals == std::string_view::npos || !shell_name(text.substr(i, equals - i))) return std::nullopt;
        std::string name(text.substr(i, equals - i));
        i = equals + 1;
        std::string value;
        while (i < text.size() && text[i] != '\n') {
            if (text[i] == '\'') {  // everything up to the next ' is literal
                const std::size_t close = text.find('\'', i + 1);
                if (close == std::string_view::npos) return std::nullopt;
                value.append(text.substr(i + 1, close - i - 1));
                i = close + 1;
            } else if (text.substr(i, 2) == "\\'") {
                value += '\'';
                i += 2;
            } else {
                return std::nullopt;  // unquoted: sh could expand or split it
            }
        }
        if (i == text.size()) return std::nullopt;  // every line ends with a newline
        ++i;
        entries.emplace_back(std::move(name), std::move(value));
    }
    return entries;
}

// The folder the files are written in: $PROVISION_FUZZ_SCRATCH (scripts/fuzz
// points it into memory), else a fresh temporary folder, removed at exit.
class ScratchFolder {
public:
    ScratchFolder() {
        if (const char* given = std::getenv("PROVISION_FUZZ_SCRATCH"); given && *given) {
            path_ = given;
            return;
        }
        std::string pattern = (std::filesystem::temp_directory_path() / "provision-fuzz-env-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = owned_ = pattern;
    }
    ~ScratchFolder() {
        std::error_code ignored;
        if (!owned_.empty()) std::filesystem::remove_all(owned_, ignored);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_, owned_;
};

inline const std::string& scratch_folder() {
    static const ScratchFolder folder;
    return folder.path();
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Sources `path` with `shell` and prints every variable NUL-terminated.
inline Entries source_with(const std::string& shell, const std::string& path, const Entries& expected) {
    const std::string script = path + ".sh";
    {
        std::ofstream out(script, std::ios::binary);
        out << ". '" << path << "' || exit 3\n";
        if (!expected.empty()) {  // printf with no argument would still print one
            out << "printf '%s\\0'";
            for (const auto& [name, value] : expected) out << " \"${" << name << "}\"";
            out << "\n";
        }
    }
    const std::string command = shell + " '" + script + "'";
    FILE* pipe = ::popen(command.c_str(), "r");
    FUZZ_CHECK(pipe != nullptr);
    std::string output;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    const int status = ::pclose(pipe);
    std::filesystem::remove(script);
    FUZZ_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    Entries got;
    std::size_t start = 0;
    for (const auto& [name, value] : expected) {
        const std::size_t end = output.find('\0', start);
        FUZZ_CHECK(end != std::string::npos);
        got.emplace_back(name, output.substr(start, end - start));
        start = end + 1;
    }
    FUZZ_CHECK(start == output.size());
    return got;
}

// Variables the shells themselves give a meaning to (read-only in bash, or
// changing on every read): a file may set them, but reading them back says
// nothing about the file.
inline bool shell_owned(const std::string& name) {
    for (const char* owned : {"UID", "EUID", "PPID", "BASHOPTS", "SHELLOPTS", "BASH_VERSINFO", "BASH_ARGV0", "GROUPS",
                              "FUNCNAME", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "OPTIND", "IFS", "PATH", "PWD",
                              "EPOCHSECONDS", "EPOCHREALTIME", "BASHPID", "HISTCMD", "POSIXLY_CORRECT"})
        if (name == owned) return true;
    return false;
}

inline std::vector<std::string_view> records(std::string_view input) {
    std::vector<std::string_view> parts;
    for (std::size_t end; (end = input.find('\x1e')) != std::string_view::npos; input.remove_prefix(end + 1))
        parts.push_back(input.substr(0, end));
    parts.push_back(input);
    return parts;
}

inline void one_input(std::string_view input, Shells shells = Shells::in_process) {
    const auto parts = records(input);
    const std::string header(parts.front());
    provision::EnvSettings settings;
    Entries expected;
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::size_t equals = parts[i].find('=');
        const std::string name(parts[i].substr(0, equals));
        const std::string value(equals == std::string_view::npos ? "" : parts[i].substr(equals + 1));
        try {
            settings.set(name, value);
            FUZZ_CHECK(shell_name(name));
        } catch (const provision::Error&) {
            FUZZ_CHECK(!shell_name(name));
            continue;
        }
        auto same = std::find_if(expected.begin(), expected.end(), [&](const auto& e) { return e.first == name; });
        if (same != expected.end()) same->second = value;  // a name set again keeps its place
        else expected.emplace_back(name, value);
    }
    FUZZ_CHECK(settings.entries() == expected);
    const bool has_nul = std::any_of(expected.begin(), expected.end(),
                                     [](const auto& entry) { return entry.second.find('\0') != std::string::npos; });

    std::string text;
    try {
        text = provision::render_env_file(settings, header);
        FUZZ_CHECK(!has_nul);
    } catch (const provision::Error& error) {
        FUZZ_CHECK(has_nul && error.code() == provision::ExitCode::invalid_input);
        return;
    }
    const auto read = read_as_sh(text);
    FUZZ_CHECK(read.has_value());
    FUZZ_CHECK(*read == expected);

    const std::string path = scratch_folder() + "/.env_settings";
    provision::write_env_file_atomically(path, text);
    FUZZ_CHECK(read_file(path) == text);
    struct stat info {};
    FUZZ_CHECK(::stat(path.c_str(), &info) == 0 && (info.st_mode & 0777) == 0644);

    const bool any_owned =
        std::any_of(expected.begin(), expected.end(), [](const auto& entry) { return shell_owned(entry.first); });
    if (shells == Shells::real && !any_owned && header.find('\0') == std::string::npos) {
        FUZZ_CHECK(source_with("/bin/sh", path, expected) == expected);
        if (::access("/bin/bash", X_OK) == 0) FUZZ_CHECK(source_with("/bin/bash", path, expected) == expected);
    }
}

}  // namespace fuzz::env_file
