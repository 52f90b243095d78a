// The env file under stress: concurrent writers, a full disk, a read-only
// folder.  Whatever happens, a reader finds the old file or a complete new
// one, never a mix, and never a stray temporary file.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

std::string fixture(const TempDir& dir, const std::string& name, const std::string& cc) {
    const std::string path = dir.file(name + ".toml");
    e2e::write_file(path, fmt::format("[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n[[gpus]]\nname = \"{}\"\n"
                                      "compute_capability = \"{}\"\nmemory_mib = 81559\n",
                                      name, cc));
    return path;
}

std::vector<std::string> args(const std::string& machine, const std::string& env_file) {
    return {"--gpu-fixture", machine, "--site-packages", e2e::site_packages("all"), "--env-file", env_file};
}

int entries(const std::string& folder) {
    int count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++count;
    return count;
}

}  // namespace

TEST_CASE("concurrent runs writing one env file leave one complete file") {
    TempDir dir;
    const std::string env_file = dir.file("shared.env");
    const auto h100 = fixture(dir, "h100", "9.0");
    const auto a100 = fixture(dir, "a100", "8.0");
    std::vector<std::future<e2e::Result>> runs;
    for (int i = 0; i < 12; ++i)
        runs.push_back(std::async(std::launch::async, [&, i] {
            return e2e::provision(args(i % 2 ? h100 : a100, env_file));
        }));
    for (auto& run : runs) CHECK(run.get().exit_code == 0);
    const auto env = e2e::source_env_file(env_file, {"PROVISION_ATTENTION", "PYTORCH_CUDA_ALLOC_CONF"});
    CHECK((env.at("PROVISION_ATTENTION") == "flash3" || env.at("PROVISION_ATTENTION") == "flash2"));
    CHECK(env.at("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
    const std::string text = e2e::read_file(env_file);
    CHECK(text.find("export PROVISION_ATTENTION=") == text.rfind("export PROVISION_ATTENTION="));
    CHECK(entries(dir.path()) == 3);  // two fixtures and the env file: no temporary left
    reliability::record("env file", "12 runs at once writing one env file (H100 and A100 machines)",
                        "every run exits 0; one complete file from one run, no temporary left");
}

TEST_CASE("a full disk leaves the old env file intact and exits non-zero") {
    TempDir dir;
    const std::string env_file = dir.file(".env_settings");
    e2e::write_file(env_file, "export OLD='kept'\n");
    const auto machine = fixture(dir, "h100", "9.0");
    // A file-size limit of zero makes every write fail as a full disk would
    // (EFBIG instead of ENOSPC); SIGXFSZ is ignored so the write returns.
    std::string command = "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\"";
    std::vector<std::string> sh_args{"-c", command, PROVISION_BINARY};
    const auto provision_args = args(machine, env_file);
    sh_args.insert(sh_args.end(), provision_args.begin(), provision_args.end());
    const auto result = e2e::run("/bin/sh", sh_args);
    CHECK(result.exit_code == 6);
    CHECK_THAT(result.err, Catch::Contains("cannot write the env file"));
    CHECK(e2e::read_file(env_file) == "export OLD='kept'\n");
    CHECK(entries(dir.path()) == 2);
    reliability::record("env file", "disk full: every write fails (file-size limit 0, EFBIG)",
                        "exit 6 naming the env file; old file intact; no temporary left");
}

TEST_CASE("a read-only folder is a clear error") {
    TempDir dir;
    // sysfs is read-only for everyone, root included.
    const auto result = e2e::provision(args(fixture(dir, "h100", "9.0"), "/sys/provision-test.env"));
    CHECK(result.exit_code == 6);
    CHECK_THAT(result.err, Catch::Contains("cannot write the env file /sys/provision-test.env"));
    reliability::record("env file", "env file in a read-only folder (/sys, read-only for root too)",
                        "exit 6 naming the env file");
}

TEST_CASE("the env file folder keeps its mode; the file gets 0644 whatever the umask") {
    TempDir dir;
    const std::string folder = dir.file("venv");
    std::filesystem::create_directory(folder);
    std::filesystem::permissions(folder, std::filesystem::perms(0750));
    const auto machine = fixture(dir, "h100", "9.0");
    const auto result = e2e::run("/bin/sh", [&] {
        std::vector<std::string> a{"-c", "umask 077; exec \"$0\" \"$@\"", PROVISION_BINARY};
        const auto rest = args(machine, folder + "/.env_settings");
        a.insert(a.end(), rest.begin(), rest.end());
        return a;
    }());
    REQUIRE(result.exit_code == 0);
    struct stat info {};
    REQUIRE(stat((folder + "/.env_settings").c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0644);
    REQUIRE(stat(folder.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0750);
    reliability::record("env file", "umask 077 when provision runs", "file mode 0644; the folder's 0750 untouched");
}

TEST_CASE("a read-only folder leaves the old file as it was") {
    TempDir dir;
    const auto machine = fixture(dir, "h100", "9.0");
    // /proc takes no new file, root or not; /proc/version stands for the old file.
    const std::string before = e2e::read_file("/proc/version");
    const auto in_proc = e2e::provision(args(machine, "/proc/version"));
    CHECK(in_proc.exit_code == 6);
    CHECK_THAT(in_proc.err, Catch::Contains("cannot write the env file /proc/version"));
    CHECK(e2e::read_file("/proc/version") == before);

    if (geteuid() != 0) {  // root writes into a folder of mode 0555 anyway
        const std::string folder = dir.file("venv");
        std::filesystem::create_directory(folder);
        e2e::write_file(folder + "/.env_settings", "export OLD='kept'\n");
        std::filesystem::permissions(folder, std::filesystem::perms(0555));
        const auto result = e2e::provision(args(machine, folder + "/.env_settings"));
        std::filesystem::permissions(folder, std::filesystem::perms(0755));
        CHECK(result.exit_code == 6);
        CHECK(e2e::read_file(folder + "/.env_settings") == "export OLD='kept'\n");
        CHECK(entries(folder) == 1);
    }
    reliability::record("env file", "read-only folder holding the old env file (/proc; mode 0555 when not root)",
                        "exit 6 naming the env file; old file intact");
}

TEST_CASE("a dangling symlink at the env file path is neither followed nor replaced: exit 6") {
    TempDir dir;
    const auto machine = fixture(dir, "h100", "9.0");
    const std::string env_file = dir.file(".env_settings");
    const std::string elsewhere = dir.file("created-through-the-link");
    std::filesystem::create_symlink(elsewhere, env_file);
    const auto result = e2e::provision(args(machine, env_file));
    CHECK(result.exit_code == 6);
    CHECK_THAT(result.err, Catch::Contains("it is a symbolic link to " + elsewhere));
    CHECK_FALSE(std::filesystem::exists(elsewhere));
    CHECK(std::filesystem::is_symlink(env_file));
    CHECK(entries(dir.path()) == 2);  // the fixture and the link: no temporary file left
    reliability::record("env file", "a dangling symlink planted at the env file path",
                        "exit 6 naming the link; the link stays; nothing created where it pointed");
}
