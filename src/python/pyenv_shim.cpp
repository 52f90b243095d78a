#include "python/pyenv_shim.h"

#include "core/text.h"
#include "python/file_probe.h"

namespace provision {
namespace {

// The first version a version file or PYENV_VERSION names ("3.11.7:3.12.1" -> "3.11.7").
std::string first_version(const std::string& text) {
    std::string word = trimmed(text.substr(0, text.find_first_of(":\n")));
    return word.substr(0, word.find_first_of(" \t"));
}

}  // namespace

std::optional<ShimTarget> resolve_pyenv_shim(const std::string& executable,
                                             const std::map<std::string, std::string>& environment,
                                             const std::string& cwd) {
    const std::string shims = file_probe::parent_of(executable);
    if (file_probe::file_name_of(shims) != "shims") return std::nullopt;
    const std::string root = file_probe::parent_of(shims);
    if (!file_probe::is_directory(root + "/versions")) return std::nullopt;

    ShimTarget target;
    std::string version;
    if (const auto it = environment.find("PYENV_VERSION"); it != environment.end() && !it->second.empty()) {
        version = first_version(it->second);
        target.chosen_by = "PYENV_VERSION";
    }
    for (std::string folder = cwd; version.empty() && !folder.empty(); folder = file_probe::parent_of(folder)) {
        const std::string file = (folder == "/" ? "" : folder) + "/.python-version";
        if (const auto text = file_probe::read_head(file, 4096)) {
            version = first_version(*text);
            target.chosen_by = file;
        }
        if (folder == "/" || folder == ".") break;
    }
    if (version.empty()) {
        if (const auto text = file_probe::read_head(root + "/version", 4096)) {
            version = first_version(*text);
            target.chosen_by = root + "/version";
        }
    }
    if (version.empty() || version == "system") return std::nullopt;
    target.executable = root + "/versions/" + version + "/bin/" + std::string(file_probe::file_name_of(executable));
    if (!file_probe::exists(target.executable)) return std::nullopt;
    return target;
}

}  // namespace provision
