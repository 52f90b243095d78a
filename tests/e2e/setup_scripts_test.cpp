// The README's first commands: scripts/run installs what building and
// running provision needs and nothing more; scripts/test the test tools
// besides.  Run with stand-ins for dpkg-query (nothing is installed),
// apt-get (which only writes down what it was asked), sudo and cmake, so
// nothing is installed or built here.
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

void write_program(const std::string& path, const std::string& script) {
    e2e::write_file(path, "#!/bin/sh\n" + script);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read);
}

// Every package the stand-in apt-get was asked to install.
std::set<std::string> installed(const std::string& log) {
    std::set<std::string> packages;
    std::istringstream lines(std::filesystem::exists(log) ? e2e::read_file(log) : "");
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string word;
        if (!(words >> word) || word != "install") continue;
        while (words >> word)
            if (!word.starts_with("-")) packages.insert(word);
    }
    return packages;
}

}  // namespace

TEST_CASE("scripts/run installs only what building and running needs; scripts/install-deps test the test tools") {
    TempDir dir;
    const std::string bin = dir.file("bin"), log = dir.file("apt-get.log");
    std::filesystem::create_directories(bin);
    write_program(bin + "/dpkg-query", "exit 1\n");
    write_program(bin + "/apt-get", "echo \"$*\" >>\"$APT_LOG\"\n");
    write_program(bin + "/sudo", "exec \"$@\"\n");
    write_program(bin + "/cmake", "exit 0\n");
    // The build folder's provision: what scripts/run hands its arguments to.
    std::filesystem::create_directories(dir.file("build"));
    write_program(dir.file("build/provision"), "echo \"provision ran: $*\"\n");
    const std::map<std::string, std::string> env = {{"PATH", bin + ":/usr/bin:/bin"},
                                                    {"APT_LOG", log},
                                                    {"BUILD_DIR", dir.file("build")}};

    const auto run = e2e::run("/bin/sh", {e2e::source_path("scripts/run"), "--version"}, env);
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.out == "provision ran: --version\n");
    const auto for_run = installed(log);
    for (const char* needed : {"cmake", "g++", "libtomlplusplus-dev", "libfmt-dev", "libcli11-dev",
                               "libcurl4-openssl-dev", "nlohmann-json3-dev", "libsodium-dev"}) {
        INFO(needed);
        CHECK(for_run.count(needed) == 1);
    }
    for (const char* test_tool : {"prometheus", "prometheus-node-exporter", "yamllint", "python3-yaml",
                                  "python3-kubernetes", "python3-venv", "catch2"}) {
        INFO(test_tool);
        CHECK(for_run.count(test_tool) == 0);
    }

    std::filesystem::remove(log);
    const auto tests = e2e::run("/bin/sh", {e2e::source_path("scripts/install-deps"), "build", "test", "fuzz"}, env);
    INFO(tests.err);
    REQUIRE(tests.exit_code == 0);
    const auto for_tests = installed(log);
    for (const char* package : {"cmake", "catch2", "prometheus", "prometheus-node-exporter", "yamllint",
                                "python3-kubernetes", "python3-venv", "clang-14", "libclang-rt-14-dev"}) {
        INFO(package);
        CHECK(for_tests.count(package) == 1);
    }
    reliability::record("set-up", "scripts/run on a machine with nothing installed (apt-get and dpkg-query stood in for)",
                        "asks apt-get for the build's packages only: no Prometheus server, node-exporter, yamllint, "
                        "Kubernetes models, venv or Catch2; scripts/install-deps test adds them for scripts/test");
}
