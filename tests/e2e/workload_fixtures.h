// Shared by the workload recipe tests: a simulated machine of every GPU
// family, extra site-packages trees, and a stand-in workload that prints the
// arguments and environment provision handed it.
#pragma once

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"

namespace workload_e2e {

// One GPU of each architecture the recipes order ("blackwell" is a B200, of
// the datacenter family), plus "cpu" (no NVIDIA GPU).
struct Family {
    std::string name;
    std::string gpu;
    std::string compute_capability;
};

inline const std::vector<Family>& families() {
    static const std::vector<Family> all = {
        {"blackwell", "NVIDIA B200", "10.0"},
        {"blackwell_consumer", "NVIDIA GeForce RTX 5090", "12.0"},
        {"hopper", "NVIDIA H100 80GB HBM3", "9.0"},
        {"ada", "NVIDIA L40S", "8.9"},
        {"ampere", "NVIDIA A100-SXM4-80GB", "8.0"},
        {"turing", "Tesla T4", "7.5"},
        {"volta", "Tesla V100-SXM2-16GB", "7.0"},
        {"pascal", "Tesla P100-PCIE-16GB", "6.0"},
        {"cpu", "", ""},
    };
    return all;
}

// Writes the simulated machine (docs/DESIGN.md's fixture format) of `family` into
// `dir` and returns its path.
inline std::string machine(const e2e::TempDir& dir, const std::string& family) {
    for (const auto& f : families()) {
        if (f.name != family) continue;
        std::string text;
        if (!f.gpu.empty())
            text = fmt::format(
                "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n[[gpus]]\nname = \"{}\"\n"
                "compute_capability = \"{}\"\nmemory_mib = 81559\nuuid = \"GPU-00000000-0000-0000-0000-000000000000\"\n",
                f.gpu, f.compute_capability);
        const std::string path = dir.file(family + ".toml");
        e2e::write_file(path, text);
        return path;
    }
    throw std::invalid_argument("no such family: " + family);
}

// A site-packages folder in `dir` holding one dist-info per "name==version".
inline std::string site_packages(const e2e::TempDir& dir, const std::string& folder,
                                 const std::vector<std::string>& dists) {
    const std::filesystem::path root = dir.file(folder);
    for (const auto& dist : dists) {
        const auto split = dist.find("==");
        const std::string name = dist.substr(0, split), version = dist.substr(split + 2);
        const auto info = root / fmt::format("{}-{}.dist-info", name, version);
        std::filesystem::create_directories(info);
        e2e::write_file((info / "METADATA").string(),
                        fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
    }
    return root.string();
}

// provision's own options for one run: the machine, the package folders and
// an env file in `dir`.
inline std::vector<std::string> options(const e2e::TempDir& dir, const std::string& workload,
                                        const std::string& family, const std::vector<std::string>& package_dirs) {
    std::vector<std::string> args{"--workload", workload, "--gpu-fixture", machine(dir, family), "--env-file",
                                  dir.file(".env_settings")};
    for (const auto& folder : package_dirs) args.insert(args.end(), {"--site-packages", folder});
    return args;
}

// What the stand-in workload saw.
struct Handoff {
    e2e::Result result;
    std::vector<std::string> arguments;         // argv after argv[0]
    std::map<std::string, std::string> env;     // the asked-for variables that were set
};

// Runs provision with `options`, handing off to `/bin/sh -c <probe> python
// <command...>`: the probe prints each argument it got and each of
// `variables`, so the test sees exactly what an exec'd `python main.py ...`
// would get.
inline Handoff hand_off(const std::vector<std::string>& options, const std::vector<std::string>& command,
                        const std::vector<std::string>& variables,
                        const std::map<std::string, std::string>& environment = {}) {
    std::string probe = "for a in \"$@\"; do printf 'ARG %s\\n' \"$a\"; done\n";
    for (const auto& name : variables)
        probe += fmt::format("[ \"${{{0}+set}}\" = set ] && printf 'ENV {0}=%s\\n' \"${0}\"\n", name);
    probe += "exit 0\n";
    std::vector<std::string> args = options;
    args.insert(args.end(), {"--", "/bin/sh", "-c", probe, "python"});
    args.insert(args.end(), command.begin(), command.end());

    Handoff handoff;
    handoff.result = e2e::provision(args, environment);
    std::istringstream lines(handoff.result.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("ARG ", 0) == 0) {
            handoff.arguments.push_back(line.substr(4));
        } else if (line.rfind("ENV ", 0) == 0) {
            const auto equals = line.find('=');
            handoff.env[line.substr(4, equals - 4)] = line.substr(equals + 1);
        }
    }
    return handoff;
}

// `base` followed by `appended`: the command line the workload must get.
inline std::vector<std::string> joined(std::vector<std::string> base, const std::vector<std::string>& appended) {
    base.insert(base.end(), appended.begin(), appended.end());
    return base;
}

// What one run must hand the workload: the mechanism, the flags appended
// after the user's command, the variables set (in the process environment
// and in the env file alike) and those that must stay unset.
struct Expectation {
    std::string family;
    std::string mechanism;
    std::vector<std::string> appended;
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
};

inline void expect_handoff(const std::string& workload, const std::vector<std::string>& package_dirs,
                           const std::vector<std::string>& command, const Expectation& expected,
                           const std::map<std::string, std::string>& environment = {}) {
    INFO(workload << " on " << expected.family);
    e2e::TempDir dir;
    std::map<std::string, std::string> set = expected.set;
    set["PROVISION_ATTENTION"] = expected.mechanism;
    std::vector<std::string> variables = expected.unset;
    for (const auto& [name, value] : set) variables.push_back(name);

    const Handoff handoff = hand_off(options(dir, workload, expected.family, package_dirs), command, variables,
                                     environment);
    INFO("stderr: " << handoff.result.err);
    REQUIRE(handoff.result.exit_code == 0);
    CHECK(handoff.arguments == joined(command, expected.appended));
    const auto file = e2e::source_env_file(dir.file(".env_settings"), variables);
    for (const auto& [name, value] : set) {
        INFO(name);
        CHECK(handoff.env.count(name) == 1);
        if (handoff.env.count(name)) CHECK(handoff.env.at(name) == value);
        CHECK(file.at(name) == value);
    }
    for (const auto& name : expected.unset) {
        INFO(name << " must stay unset");
        CHECK(handoff.env.count(name) == 0);
        CHECK(file.at(name).empty());
    }
}

}  // namespace workload_e2e
