// In-process cost of finding the workload's Python: the interpreter and its
// folders (through --python and through a console script's #! line), the
// site-packages scan, and the check of what the needed packages were built
// for.  Without an argument a fake venv is made under
// /tmp/provision-python-bench; with one, that interpreter is measured
// (python_discovery_cost /opt/venv/bin/python3), as --python and as the COMMAND.
//
//   cmake --build build --target python_discovery_cost      # a build with CUDA (bench/ is built there)
// or, without CUDA:
//   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DPROVISION_WITH_CUDA=OFF -DPROVISION_BUILD_TESTS=OFF
//   cmake --build build-release --target provision_src_python     (and the folders it links)
//   g++ -O2 -std=c++20 -DNDEBUG -Isrc -Ikernels -o /tmp/python_discovery_cost bench/readers/python_discovery_cost.cpp
//       build-release/libprovision_src_{python,packages,core}.a -lfmt -ldl     (one command)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "packages/site_packages.h"
#include "python/python_mismatch.h"
#include "python/workload_python.h"

namespace fs = std::filesystem;
using namespace provision;

namespace {

const std::string kRoot = "/tmp/provision-python-bench/venv";

void write(const std::string& path, const std::string& text, bool executable = false) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    if (executable) ::chmod(path.c_str(), 0755);
}

// The six attention packages, each with METADATA and a cp312 WHEEL.
void make_venv() {
    write(kRoot + "/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n");
    write(kRoot + "/bin/python3", "#!/bin/sh\nexit 0\n", true);
    write(kRoot + "/bin/vllm", "#!" + kRoot + "/bin/python3\nimport sys\n", true);
    const std::string site = kRoot + "/lib/python3.12/site-packages/";
    for (const auto& [name, version] : std::vector<std::pair<std::string, std::string>>{
             {"torch", "2.11.0"}, {"flash_attn", "2.8.3"}, {"flash_attn_3", "3.0.0b1"}, {"sageattention", "2.2.0"},
             {"triton", "3.6.0"}, {"xformers", "0.0.32.post2"}}) {
        const std::string info = site + name + "-" + version + ".dist-info/";
        write(info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
        write(info + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n");
    }
}

double micros(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

}  // namespace

int main(int argc, char** argv) {
    const bool fake = argc < 2;
    if (fake) make_venv();
    PythonQuery option;
    option.python = fake ? kRoot + "/bin/python3" : std::string(argv[1]);
    option.environment = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}};
    PythonQuery command = option;
    command.python.clear();
    command.command = {fake ? kRoot + "/bin/vllm" : option.python, "serve.py"};
    const std::vector<std::string> needed{"torch",         "flash_attn", "flash_attn_3", "flashattn-hopper",
                                          "sageattention", "triton",     "xformers"};
    constexpr int kRounds = 2000;
    for (int repeat = 0; repeat < 3; ++repeat) {
        double by_option = 0, by_command = 0, scan = 0, builds = 0;
        for (int i = 0; i < kRounds; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            const WorkloadPython python = find_workload_python(option);
            if (!python.version) return 2;
            const auto t1 = std::chrono::steady_clock::now();
            const WorkloadPython through_script = find_workload_python(command);
            const auto t2 = std::chrono::steady_clock::now();
            const PackageIndex packages = scan_site_packages(python.site_packages);
            const auto t3 = std::chrono::steady_clock::now();
            const auto mismatches = find_python_mismatches(packages, needed, *python.version);
            const auto t4 = std::chrono::steady_clock::now();
            if (fake && (!mismatches.empty() || through_script.site_packages != python.site_packages)) return 1;
            if (repeat == 0 && i == 0)
                std::printf("%s: Python %s, %zu folders, %zu packages, %zu built for another Python\n",
                            python.executable.c_str(), python.version ? python.version->str().c_str() : "unknown",
                            python.site_packages.size(), packages.packages().size(), mismatches.size());
            by_option += micros(t0, t1);
            by_command += micros(t1, t2);
            scan += micros(t2, t3);
            builds += micros(t3, t4);
        }
        std::printf("per start, mean of %d: --python %.1f us | as the COMMAND %.1f us | site-packages scan "
                    "%.1f us | build check of the needed packages %.1f us\n",
                    kRounds, by_option / kRounds, by_command / kRounds, scan / kRounds, builds / kRounds);
    }
    return 0;
}
