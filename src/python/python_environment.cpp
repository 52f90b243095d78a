#include "python/python_environment.h"

#include <algorithm>

#include <glob.h>

#include <fmt/format.h>

#include "python/file_probe.h"
#include "python/pyvenv_config.h"

namespace provision {
namespace {

constexpr std::size_t kPyvenvConfigBytes = 16 * 1024;

std::string value_of(const std::map<std::string, std::string>& environment, const char* name) {
    const auto it = environment.find(name);
    return it == environment.end() ? std::string() : it->second;
}

// The folder holding pyvenv.cfg: the executable's own folder or the one above.
std::optional<std::string> venv_root(const std::string& executable) {
    const std::string bin = file_probe::parent_of(executable);
    for (const std::string& folder : {bin, file_probe::parent_of(bin)})
        if (file_probe::exists(folder + "/pyvenv.cfg")) return folder;
    return std::nullopt;
}

std::optional<PythonVersion> version_from_names(const std::string& executable) {
    if (auto version = PythonVersion::from_file_name(file_probe::file_name_of(executable))) return version;
    return PythonVersion::from_file_name(file_probe::file_name_of(file_probe::resolved(executable)));
}

// "PREFIX/bin/python3" -> "PREFIX".
std::string prefix_of(const std::string& executable) {
    return file_probe::parent_of(file_probe::parent_of(executable));
}

// The existing folders matching `pattern`, sorted.
std::vector<std::string> matching(const std::string& pattern) {
    std::vector<std::string> folders;
    glob_t matches{};
    if (::glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &matches) == 0)
        for (std::size_t i = 0; i < matches.gl_pathc; ++i) folders.emplace_back(matches.gl_pathv[i]);
    ::globfree(&matches);
    return folders;
}

// "lib/python3.12" or, with the version unknown, every "lib/python3.*".
std::vector<std::string> version_folders(const std::string& lib, const std::optional<PythonVersion>& version) {
    if (version) return {fmt::format("{}/python{}", lib, version->str())};
    return matching(lib + "/python3.*");
}

class FolderList {
public:
    void add(const std::string& folder) {
        if (std::find(folders_.begin(), folders_.end(), folder) != folders_.end()) return;
        if (file_probe::is_directory(folder)) folders_.push_back(folder);
    }
    std::vector<std::string> take() { return std::move(folders_); }

private:
    std::vector<std::string> folders_;
};

// An installed (non-venv) Python's own folders under `prefix`: site-packages,
// and Debian's dist-packages (/usr/local/lib/python3.Y/dist-packages first
// for /usr, where NGC images install their packages).
void add_prefix_folders(const std::string& prefix, const std::optional<PythonVersion>& version, FolderList& out) {
    if (prefix == "/usr")
        for (const auto& folder : version_folders("/usr/local/lib", version)) out.add(folder + "/dist-packages");
    for (const auto& folder : version_folders(prefix + "/lib", version)) {
        out.add(folder + "/site-packages");
        out.add(folder + "/dist-packages");
    }
    out.add(prefix + "/lib/python3/dist-packages");
}

void add_user_site(const LocatedInterpreter& interpreter, const std::optional<PythonVersion>& version,
                   const std::map<std::string, std::string>& environment, FolderList& out) {
    const bool read_environment = !interpreter.flags.ignore_environment;
    if (interpreter.flags.no_user_site) return;
    if (read_environment && !value_of(environment, "PYTHONNOUSERSITE").empty()) return;
    std::string base = read_environment ? value_of(environment, "PYTHONUSERBASE") : std::string();
    if (base.empty()) {
        const std::string home = value_of(environment, "HOME");
        if (home.empty()) return;
        base = home + "/.local";
    }
    for (const auto& folder : version_folders(base + "/lib", version)) out.add(folder + "/site-packages");
}

void add_python_path(const LocatedInterpreter& interpreter, const std::map<std::string, std::string>& environment,
                     FolderList& out) {
    if (interpreter.flags.ignore_environment) return;
    const std::string path = value_of(environment, "PYTHONPATH");
    std::size_t at = 0;
    while (at < path.size()) {
        const auto end = path.find(':', at);
        const std::string entry = path.substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (!entry.empty()) out.add(entry);
        at = end == std::string::npos ? path.size() : end + 1;
    }
}

}  // namespace

PythonEnvironment read_python_environment(const LocatedInterpreter& interpreter,
                                          const std::map<std::string, std::string>& environment) {
    PythonEnvironment result;
    const std::string& executable = interpreter.executable;
    FolderList folders;
    add_python_path(interpreter, environment, folders);

    if (const auto root = venv_root(executable)) {
        result.kind = EnvironmentKind::venv;
        result.root = *root;
        const auto config = file_probe::read_head(*root + "/pyvenv.cfg", kPyvenvConfigBytes);
        const PyvenvConfig cfg = parse_pyvenv_config(config.value_or(""));
        result.version = cfg.version ? cfg.version : version_from_names(executable);
        // A venv that leaves out the system's packages leaves out the user site too.
        if (cfg.include_system_site_packages) add_user_site(interpreter, result.version, environment, folders);
        for (const auto& folder : version_folders(*root + "/lib", result.version))
            folders.add(folder + "/site-packages");
        if (cfg.include_system_site_packages && !cfg.home.empty()) {
            const std::string base =
                file_probe::file_name_of(cfg.home) == "bin" ? file_probe::parent_of(cfg.home) : cfg.home;
            add_prefix_folders(base, result.version, folders);
        }
    } else {
        // conda's python is a file in PREFIX/bin; a system one may be a link
        // (/usr/local/bin/python3 -> /usr/bin/python3.12): Python finds its
        // prefix from the resolved file.
        const std::string given_prefix = prefix_of(executable);
        const std::string real_prefix = prefix_of(file_probe::resolved(executable));
        result.version = version_from_names(executable);
        if (file_probe::is_directory(given_prefix + "/conda-meta")) {
            result.kind = EnvironmentKind::conda;
            result.root = given_prefix;
        } else {
            result.kind = file_probe::is_directory(real_prefix + "/conda-meta") ? EnvironmentKind::conda
                                                                                : EnvironmentKind::system;
            result.root = real_prefix;
        }
        add_user_site(interpreter, result.version, environment, folders);
        add_prefix_folders(result.root, result.version, folders);
    }
    if (!result.version)
        result.notes.push_back(fmt::format(
            "cannot tell the Python version of {} (no pyvenv.cfg version, no version in its file name): "
            "reading every lib/python3.* folder of its environment",
            executable));
    result.site_packages = folders.take();
    return result;
}

}  // namespace provision
