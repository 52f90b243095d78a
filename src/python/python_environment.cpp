#include "python/python_environment.h"

#include <algorithm>

#include <pwd.h>
#include <unistd.h>

#include <fmt/format.h>

#include "python/file_probe.h"
#include "python/pyvenv_config.h"
#include "python/site_layout.h"

namespace provision {
namespace {

// Real ones hold a few lines; site.py reads the whole file.
constexpr std::size_t kPyvenvConfigBytes = 1024 * 1024;

const std::string* value_of(const std::map<std::string, std::string>& environment, const char* name) {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : &it->second;
}

// The folder holding pyvenv.cfg: the executable's own folder or the one
// above, as site.py's venv() looks (os.path.isfile: a regular file).
std::optional<std::string> venv_root(const std::string& executable) {
    const std::string bin = file_probe::parent_of(executable);
    for (const std::string& folder : {bin, file_probe::parent_of(bin)})
        if (file_probe::is_regular_file(folder + "/pyvenv.cfg")) return folder;
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

// sys.path's folders in order: each once, and only those that exist (site.py
// adds a site folder only when it is a folder; a missing PYTHONPATH entry
// holds nothing to import).
class FolderList {
public:
    void add(const std::string& folder) {
        if (std::find(folders_.begin(), folders_.end(), folder) != folders_.end()) return;
        if (file_probe::is_directory(folder)) folders_.push_back(folder);
    }
    void add(const std::vector<std::string>& folders) {
        for (const auto& folder : folders) add(folder);
    }
    std::vector<std::string> take() { return std::move(folders_); }

private:
    std::vector<std::string> folders_;
};

// PYTHONPATH's entries, made absolute as site.py's removeduppaths() does;
// unread under -E and -I.
void add_python_path(const LocatedInterpreter& interpreter, const std::map<std::string, std::string>& environment,
                     const std::string& cwd, FolderList& out) {
    if (interpreter.flags.ignore_environment) return;
    const std::string* path = value_of(environment, "PYTHONPATH");
    if (!path) return;
    std::size_t at = 0;
    while (at < path->size()) {
        const auto end = path->find(':', at);
        const std::string entry = path->substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (!entry.empty()) out.add(file_probe::absolute(entry, cwd));
        at = end == std::string::npos ? path->size() : end + 1;
    }
}

// The home folder os.path.expanduser("~") gives: HOME when set (even
// empty), else the password database's.
std::string home_of(const std::map<std::string, std::string>& environment) {
    if (const std::string* home = value_of(environment, "HOME")) return *home;
    // getpwuid_r: detection runs on another thread meanwhile.
    passwd entry{};
    passwd* found = nullptr;
    char buffer[4096];
    if (::getpwuid_r(::getuid(), &entry, buffer, sizeof buffer, &found) != 0 || !found || !found->pw_dir) return {};
    return found->pw_dir;
}

// site.py's check_enableusersite() and getusersitepackages(): off with -s,
// -I or PYTHONNOUSERSITE (unless -E), and for a set-user-ID process.
// PYTHONUSERBASE is read from os.environ, so even under -E.
std::vector<std::string> user_site(const LocatedInterpreter& interpreter,
                                     const std::optional<PythonVersion>& version,
                                     const std::map<std::string, std::string>& environment) {
    if (interpreter.flags.no_user_site) return {};
    if (!interpreter.flags.ignore_environment) {
        const std::string* no_user_site = value_of(environment, "PYTHONNOUSERSITE");
        if (no_user_site && !no_user_site->empty()) return {};
    }
    if (::geteuid() != ::getuid() || ::getegid() != ::getgid()) return {};
    const std::string* user_base = value_of(environment, "PYTHONUSERBASE");
    std::string base = user_base && !user_base->empty() ? *user_base : std::string();
    if (base.empty()) {
        std::string home = home_of(environment);
        while (!home.empty() && home.back() == '/') home.pop_back();
        base = home + "/.local";
    }
    std::vector<std::string> folders;
    for (const auto& folder : version_folders(base + "/lib", version)) folders.push_back(folder + "/site-packages");
    return folders;
}

// The base installation's prefix from pyvenv.cfg's home (its bin folder).
std::string base_prefix_of(const PyvenvConfig& config) {
    return file_probe::file_name_of(config.home) == "bin" ? file_probe::parent_of(config.home) : config.home;
}

}  // namespace

PythonEnvironment read_python_environment(const LocatedInterpreter& interpreter,
                                          const std::map<std::string, std::string>& environment) {
    PythonEnvironment result;
    const std::string& executable = interpreter.executable;
    const std::string cwd = file_probe::current_folder();
    FolderList folders;
    add_python_path(interpreter, environment, cwd, folders);

    // site.py's main(): the venv's own folders, then the user site, then the
    // base installation's (PREFIXES).
    std::vector<std::string> own, base;
    bool user_site_allowed = true;
    if (const auto root = venv_root(executable)) {
        result.kind = EnvironmentKind::venv;
        result.root = *root;
        const auto config_text = file_probe::read_head(*root + "/pyvenv.cfg", kPyvenvConfigBytes);
        const PyvenvConfig config = parse_pyvenv_config(config_text.value_or(""));
        result.version = config.version ? config.version : version_from_names(executable);
        const std::string base_prefix = base_prefix_of(config);
        const SiteLayout layout =
            base_prefix.empty() ? SiteLayout::cpython : site_layout_of(base_prefix, result.version);
        own = prefix_site_folders(*root, layout, true, result.version);
        // A venv that leaves out the system's packages leaves out the user site too.
        user_site_allowed = config.include_system_site_packages;
        if (config.include_system_site_packages && !base_prefix.empty())
            base = prefix_site_folders(base_prefix, layout, true, result.version);
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
        base = prefix_site_folders(result.root, site_layout_of(result.root, result.version), false, result.version);
    }
    // -S: the site module never runs; only PYTHONPATH is on sys.path.
    if (!interpreter.flags.no_site) {
        folders.add(own);
        if (user_site_allowed) folders.add(user_site(interpreter, result.version, environment));
        folders.add(base);
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
