#include "python/pyenv_shim.h"

#include <fmt/format.h>

#include "core/text.h"
#include "python/file_probe.h"

namespace provision {
namespace {

// More than any version file holds; pyenv reads lines of up to 1024 bytes.
constexpr std::size_t kVersionFileBytes = 64 * 1024;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// pyenv builds PYENV_ROOT/versions/VERSION from it: a path cannot be one.
bool is_refused(const std::string& version) { return version == "." || version == ".." || version.find('/') != std::string::npos; }

std::vector<std::string> split_colons(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t at = 0;
    while (at <= text.size()) {
        const auto end = text.find(':', at);
        std::string part = trimmed(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
        if (!part.empty()) parts.push_back(std::move(part));
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return parts;
}

}  // namespace

std::vector<std::string> read_pyenv_version_file(std::string_view text) {
    std::vector<std::string> versions;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = text.find('\n', at);
        std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
        at = end == std::string_view::npos ? text.size() : end + 1;
        std::size_t first = 0;
        while (first < line.size() && is_blank(line[first])) ++first;
        std::size_t last = first;
        while (last < line.size() && !is_blank(line[last])) ++last;
        const std::string word(line.substr(first, last - first));
        if (word.empty() || word.starts_with('#')) continue;
        versions.push_back(word);
    }
    return versions;
}

PyenvChoice resolve_pyenv_shim(const std::string& executable, const std::map<std::string, std::string>& environment,
                               const std::string& cwd) {
    PyenvChoice choice;
    const std::string shims = file_probe::parent_of(executable);
    if (file_probe::file_name_of(shims) != "shims") return choice;
    const std::string root = file_probe::parent_of(shims);
    if (!file_probe::is_directory(root + "/versions")) return choice;

    std::vector<std::string> versions;
    std::string chosen_by;
    if (const auto it = environment.find("PYENV_VERSION"); it != environment.end() && !trimmed(it->second).empty()) {
        versions = split_colons(it->second);
        chosen_by = "PYENV_VERSION";
    } else {
        // The nearest .python-version decides, even when it names nothing
        // (then "system"); only without one does PYENV_ROOT/version count.
        std::string file;
        for (std::string folder = cwd; !folder.empty(); folder = file_probe::parent_of(folder)) {
            const std::string candidate = (folder == "/" ? "" : folder) + "/.python-version";
            if (file_probe::is_regular_file(candidate)) {
                file = candidate;
                break;
            }
            if (folder == "/" || folder == ".") break;
        }
        if (file.empty()) file = root + "/version";
        chosen_by = file;
        if (const auto text = file_probe::read_head(file, kVersionFileBytes)) versions = read_pyenv_version_file(*text);
    }

    const std::string command(file_probe::file_name_of(executable));
    std::vector<std::string> not_installed;
    for (const auto& version : versions) {
        if (version == "system") return choice;  // the shim stays as found
        if (is_refused(version)) {
            choice.notes.push_back(fmt::format("{} names the pyenv version '{}', which pyenv refuses (invalid version)",
                                               chosen_by, version));
            continue;
        }
        const std::string candidate = root + "/versions/" + version + "/bin/" + command;
        if (file_probe::exists(candidate)) {
            choice.target = ShimTarget{candidate, chosen_by};
            return choice;
        }
        not_installed.push_back(version);
    }
    if (!not_installed.empty())
        choice.notes.push_back(fmt::format("{} names pyenv {} {}, which has no {} under {}/versions", chosen_by,
                                           not_installed.size() == 1 ? "version" : "versions",
                                           fmt::join(not_installed, ", "), command, root));
    return choice;
}

}  // namespace provision
