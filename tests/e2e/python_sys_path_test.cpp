// The folders provision reads for the workload's Python, checked against a
// real CPython's sys.path: Debian's python3, venvs of it with and without
// the system's site-packages (and with pyvenv.cfg leaving the key out), the
// user site, PYTHONPATH (a relative entry too), PYTHONNOUSERSITE,
// PYTHONUSERBASE and the -S, -s, -I and -E flags.  The interpreter runs
// only here, in the test, to say what it imports from; provision itself
// never starts it.  Skipped, saying why, where no python3 exists.
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

namespace {

namespace fs = std::filesystem;

// Debian's own interpreter; the one on PATH may be another (pyenv's).
constexpr const char* kDebianPython = "/usr/bin/python3";

// Prints sys.path as JSON, and nothing else.
constexpr const char* kPrintSysPath = "import sys, json; print(json.dumps(sys.path))";

nlohmann::json sys_path(const std::string& python, const std::vector<std::string>& flags,
                        const std::map<std::string, std::string>& env, const std::string& cwd) {
    std::vector<std::string> args = flags;
    args.insert(args.end(), {"-c", kPrintSysPath});
    const auto result = e2e::run(python, args, env, cwd);
    INFO(python << " " << fmt::format("{}", fmt::join(flags, " ")) << ": " << result.err);
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out);
}

// The entries of sys.path provision models: existing folders that are
// neither the standard library (what `python -I -S` has) nor the script's
// folder ("" for -c).  A relative entry (under -S site.py does not make
// PYTHONPATH's absolute) is the folder it names from `cwd`.
std::vector<std::string> site_folders(const nlohmann::json& path, const nlohmann::json& standard_library,
                                      const std::string& cwd) {
    std::vector<std::string> folders;
    for (const auto& entry : path) {
        std::string folder = entry.get<std::string>();
        if (folder.empty()) continue;
        if (std::find(standard_library.begin(), standard_library.end(), entry) != standard_library.end()) continue;
        if (folder.front() != '/') folder = (fs::path(cwd) / folder).lexically_normal().string();
        if (fs::is_directory(folder)) folders.push_back(folder);
    }
    return folders;
}

}  // namespace

TEST_CASE("the folders read for the workload's Python are sys.path's, checked against a real CPython",
          "[python][cpython]") {
    if (::access(kDebianPython, X_OK) != 0) {
        WARN("skipped: no " << kDebianPython << " to compare with (scripts/install-deps installs python3)");
        return;
    }
    e2e::TempDir dir;
    const std::string home = dir.file("home");
    const std::map<std::string, std::string> base_env{{"PATH", "/usr/bin:/bin"}, {"HOME", home}};
    const std::string version = [&] {
        const auto result =
            e2e::run(kDebianPython, {"-c", "import sys; print('%d.%d' % sys.version_info[:2])"}, base_env);
        REQUIRE(result.exit_code == 0);
        return result.out.substr(0, result.out.find('\n'));
    }();
    const nlohmann::json standard_library = sys_path(kDebianPython, {"-I", "-S"}, base_env, dir.path());

    fs::create_directories(home + "/.local/lib/python" + version + "/site-packages");
    fs::create_directories(dir.file("userbase/lib/python" + version + "/site-packages"));
    for (const char* folder : {"pp1", "pp2", "relative"}) fs::create_directories(dir.file(folder));

    std::vector<std::string> interpreters{kDebianPython};
    for (const auto& [name, flag] : std::vector<std::pair<std::string, std::string>>{
             {"venv", ""}, {"venv-system", "--system-site-packages"}, {"venv-no-key", "--system-site-packages"}}) {
        std::vector<std::string> args{"-m", "venv", "--without-pip"};
        if (!flag.empty()) args.push_back(flag);
        args.push_back(dir.file(name));
        const auto made = e2e::run(kDebianPython, args, base_env);
        if (made.exit_code != 0) {
            WARN("skipped the venv cases: python3 -m venv failed (Debian: apt-get install python3-venv): " << made.err);
            break;
        }
        fs::create_directories(dir.file(name + "/lib/python" + version + "/site-packages"));
        interpreters.push_back(dir.file(name + "/bin/python3"));
    }
    if (fs::exists(dir.file("venv-no-key/pyvenv.cfg"))) {
        // Without the key site.py includes the system's packages ("true").
        std::string config = e2e::read_file(dir.file("venv-no-key/pyvenv.cfg"));
        const auto key = config.find("include-system-site-packages");
        config.erase(key, config.find('\n', key) - key + 1);
        e2e::write_file(dir.file("venv-no-key/pyvenv.cfg"), config);
    }

    const std::vector<std::vector<std::string>> flag_sets{{}, {"-s"}, {"-S"}, {"-I"}, {"-E"}, {"-E", "-s"}};
    const std::vector<std::map<std::string, std::string>> environments{
        {},
        {{"PYTHONPATH", dir.file("pp1") + ":relative:" + dir.file("missing") + ":" + dir.file("pp2")}},
        {{"PYTHONNOUSERSITE", "1"}},
        {{"PYTHONUSERBASE", dir.file("userbase")}},
    };
    std::size_t compared = 0;
    for (const auto& python : interpreters)
        for (const auto& flags : flag_sets)
            for (const auto& extra : environments) {
                auto env = base_env;
                env.insert(extra.begin(), extra.end());
                const auto expected =
                    site_folders(sys_path(python, flags, env, dir.path()), standard_library, dir.path());
                std::vector<std::string> args{"--json", "--gpu-fixture", e2e::gpu_fixture("cpu-only"),
                                              "--no-validate", "--env-file", "/dev/null", "--", python};
                args.insert(args.end(), flags.begin(), flags.end());
                args.insert(args.end(), {"-c", "pass"});
                const auto result = e2e::run(PROVISION_BINARY, args, env, dir.path());
                INFO(python << " " << fmt::format("{}", fmt::join(flags, " ")) << " with "
                            << nlohmann::json(extra).dump() << "\nstderr: " << result.err);
                REQUIRE(result.exit_code == 0);
                const auto report = e2e::report(result);
                CHECK(report["python"]["site_packages"].get<std::vector<std::string>>() == expected);
                ++compared;
            }
    CHECK(compared == interpreters.size() * flag_sets.size() * environments.size());
    reliability::record("python", fmt::format("sys.path of Debian's python3 {} and {} venvs of it, {} flag sets, {} "
                                              "environments (PYTHONPATH, PYTHONNOUSERSITE, PYTHONUSERBASE)",
                                              version, interpreters.size() - 1, flag_sets.size(), environments.size()),
                        fmt::format("provision's folders equal CPython's site folders in all {} cases", compared));
}
