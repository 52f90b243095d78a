// What the fixture and recipe readers take, and what the publishing stage
// makes of it, fed the values a hostile user or node gives: integers that do
// not fit their field, fixtures far over their bounds, control characters in
// every value a message echoes, recipe names that would forge a built-in
// node label, an empty label prefix, repeated findings in the metrics, and an
// unlimited tmpfs at /dev/shm.  Each case was shown failing on a binary from
// before its fix (docs/RELIABILITY.md, "Shown failing before their fixes").
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

namespace {

using e2e::has;
using e2e::TempDir;

constexpr const char* kDriver = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";

std::string h100_entry(const std::string& extra = "") {
    return "\n[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n" +
           extra;
}

// provision on `fixture` with `extra` options, --json, no validation, the
// env file in `dir`.
e2e::Result run_on(const TempDir& dir, const std::string& fixture, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"--gpu-fixture", fixture, "--json", "--no-validate", "--site-packages",
                                  e2e::site_packages("torch-only"), "--env-file", dir.file("env")};
    args.insert(args.end(), extra.begin(), extra.end());
    return e2e::provision(args);
}

}  // namespace

TEST_CASE("readers-content: an integer that does not fit its field is an error at file:line:column, never wrapped",
          "[readers-content]") {
    struct Case {
        std::string what;
        bool is_fixture;      // else a recipe merged over the built-in ones, on the H100 fixture
        std::string text;
        std::string message;  // after "FILE:"
    };
    const std::vector<Case> cases = {
        {"fixture: other_processes = 2^32, past NVML's unsigned int", true,
         kDriver + h100_entry("[gpus.health]\nother_processes = 4294967296\n"),
         "10:19: 'other_processes' in the health table of [[gpus]] entry 1 must be an integer from 0 to 4294967295, "
         "not 4294967296"},
        {"fixture: memory_mib = 2^64, past TOML's 64 bits", true,
         kDriver + std::string("\n[[gpus]]\nname = \"x\"\ncompute_capability = \"9.0\"\n"
                               "memory_mib = 18446744073709551616\n"),
         "8:34: "},
        {"recipe: [pod] shm_min_mib whose bytes pass 64 bits", false, "[pod]\nshm_min_mib = 17592186044417\n",
         "2:15: 'shm_min_mib' in [pod] must be an integer from 0 to 17592186044415, not 17592186044417"},
        {"recipe: [policy] memory_in_use_min_mib = -1", false, "[policy]\nmemory_in_use_min_mib = -1\n",
         "2:25: 'memory_in_use_min_mib' in [policy] must be an integer of 0 or more, not -1"},
    };
    for (const Case& input : cases) {
        INFO(input.what);
        TempDir dir;
        const std::string file = dir.file(input.is_fixture ? "machine.toml" : "user.toml");
        e2e::write_file(file, input.text);
        const auto result = input.is_fixture ? run_on(dir, file) : run_on(dir, e2e::gpu_fixture("h100"), {"--recipe", file});
        INFO(result.err);
        CHECK(result.exit_code == 3);
        CHECK(has(result.err, file + ":" + input.message));
        reliability::record(input.is_fixture ? "fixture input" : "recipe input", input.what,
                            "exit 3 at file:line:column naming the range; no value wrapped");
    }
}

TEST_CASE("readers-content: every message that echoes a fixture or recipe value escapes it and cuts it to 64 bytes",
          "[readers-content]") {
    // 3,000 bytes of ESC, BEL and OSC sequences (a title change, a screen clear) as TOML escapes.
    std::string hostile;
    while (hostile.size() < 3000) hostile += "\\u001b]0;owned\\u0007\\u001b[2J\\r";
    const std::string two_gpus = kDriver + h100_entry() + h100_entry();
    struct Case {
        std::string what;
        bool is_fixture;
        std::string text;
    };
    const std::vector<Case> cases = {
        {"fixture topology", true, two_gpus + "[[links]]\ngpus = [0, 1]\ntopology = \"" + hostile + "\"\np2p = \"ok\"\n"},
        {"fixture p2p", true, two_gpus + "[[links]]\ngpus = [0, 1]\ntopology = \"SYS\"\np2p = \"" + hostile + "\"\n"},
        {"fixture uuid", true, kDriver + h100_entry("uuid = \"" + hostile + "\"\n")},
        {"fixture compute_capability", true,
         kDriver + std::string("\n[[gpus]]\nname = \"x\"\nmemory_mib = 1\ncompute_capability = \"") + hostile + "\"\n"},
        {"fixture cuda", true, std::string("[driver]\nversion = \"580.159.04\"\ncuda = \"") + hostile + "\"\n"},
        {"fixture unknown key", true, kDriver + h100_entry("\"" + hostile + "\" = 1\n")},
        {"recipe unknown key", false, "[mechanisms.flash2]\n\"" + hostile + "\" = 1\n"},
        {"recipe compute capability", false, "[mechanisms.flash2]\nmin_compute_capability = \"" + hostile + "\"\n"},
        {"recipe mechanism name in a preference order", false,
         "[workloads.generic.preference]\nhopper = [\"" + hostile + "\"]\n"},
        {"recipe table name", false, "[mechanisms.\"" + hostile + "\"]\nmin_compute_capability = \"x\"\n"},
        {"recipe policy level", false, "[policy]\ngpu_lost = \"" + hostile + "\"\n"},
        {"recipe package requirement", false, "[mechanisms.flash2]\npackages = [\"flash-attn>=" + hostile + "\"]\n"},
        {"recipe torch build", false, "[torch_builds.cu1]\nindex = \"i\"\ncuda = \"" + hostile + "\"\ntorch = \">=2\"\n"},
    };
    for (const Case& input : cases) {
        INFO(input.what);
        TempDir dir;
        const std::string file = dir.file(input.is_fixture ? "machine.toml" : "user.toml");
        e2e::write_file(file, input.text);
        const auto result = input.is_fixture ? run_on(dir, file) : run_on(dir, e2e::gpu_fixture("h100"), {"--recipe", file});
        INFO(result.err);
        CHECK(result.exit_code == 3);
        CHECK(has(result.err, file + ":"));
        // One line, every control character escaped, the value cut short.
        const std::string line = result.err.substr(0, result.err.find('\n'));
        CHECK(result.err.size() == line.size() + 1);
        CHECK(std::none_of(line.begin(), line.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; }));
        CHECK(has(line, "\\x1b"));
        CHECK(line.size() < 1024);
        // The JSON error document carries the same message.
        CHECK(has(e2e::report(result)["error"]["message"].get<std::string>(), "\\x1b"));
        reliability::record(input.is_fixture ? "fixture input" : "recipe input",
                            input.what + " of 3,000 bytes of ESC, BEL and OSC sequences",
                            "exit 3 at file:line:column; one line, control characters as \\xNN, the value cut to 64 "
                            "bytes");
    }
}

namespace {

// A fixture of `gpus` H100s with 18 NVLinks each; with `links`, every pair
// listed as joined by NVSwitch (else every pair is SYS, left to the reader).
std::string pod(std::size_t gpus, bool links) {
    std::string text = kDriver;
    for (std::size_t i = 0; i < gpus; ++i) text += h100_entry("nvlinks = 18\n");
    if (links)
        for (std::size_t a = 0; a < gpus; ++a)
            for (std::size_t b = a + 1; b < gpus; ++b)
                text += fmt::format("[[links]]\ngpus = [{}, {}]\ntopology = \"NV18\"\np2p = \"ok\"\n", a, b);
    return text;
}

// A run still going after this long is killed: a hang guard, no time is asserted.
constexpr double kGuardSeconds = 60;

}  // namespace

TEST_CASE("readers-content: a GPU fixture holds at most 64 GPUs: more are refused at once, 64 with all their links "
          "load within the memory bound",
          "[readers-content]") {
    TempDir dir;
    auto run_guarded = [&](const std::string& fixture, const std::vector<std::string>& extra) {
        std::vector<std::string> args{"--gpu-fixture", fixture, "--json", "--no-validate", "--site-packages",
                                      e2e::site_packages("torch-only"), "--env-file", dir.file("env")};
        args.insert(args.end(), extra.begin(), extra.end());
        e2e::RunOptions options;
        options.kill_after_s = kGuardSeconds;
        options.measure = true;
        return e2e::run(PROVISION_BINARY, args, {}, options);
    };
    // 1,000 GPUs (the size that did not load in 100 s; its pairs left to the reader), and 65: refused at
    // the 65th entry.
    for (const std::size_t gpus : {1000u, 65u}) {
        INFO(gpus << " GPUs");
        const std::string fixture = dir.file("pod-" + std::to_string(gpus) + ".toml");
        e2e::write_file(fixture, pod(gpus, false));
        const auto result = run_guarded(fixture, {});
        INFO(result.err);
        CHECK_FALSE(result.killed_by_guard);
        CHECK(result.exit_code == 3);
        CHECK(has(result.err, fixture + ":" + std::to_string(3 + 64 * 6 + 2) +
                                  ":1: [[gpus]] entry 65 is one too many: a GPU fixture holds at most 64 GPUs"));
    }
    // 64 GPUs and their 2,016 links, with the labels, the metrics and --explain's matrix.
    const std::string fixture = dir.file("pod-64.toml");
    e2e::write_file(fixture, pod(64, true));
    const auto result = run_guarded(fixture, {"--explain", "--node-labels", dir.file("labels"), "--metrics",
                                              dir.file("provision.prom")});
    INFO(result.err.substr(0, 2000));
    CHECK_FALSE(result.killed_by_guard);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["gpus"].size() == 64);
    CHECK(report["links"].size() == 2016);
    CHECK(has(e2e::read_file(dir.file("labels")), "provision/gpu.count=64\n"));
    e2e::check_memory_bound(result);
    // One past the links of 64 GPUs is refused.
    e2e::write_file(fixture, pod(64, true) + "[[links]]\ngpus = [0, 1]\ntopology = \"SYS\"\np2p = \"ok\"\n");
    const auto over = run_guarded(fixture, {});
    CHECK(over.exit_code == 3);
    CHECK(has(over.err, "[[links]] entry 2017 is one too many: a fixture of 64 GPUs has 2016 pairs"));
    reliability::record("fixture input", "GPU fixtures of 1,000 and 65 GPUs; 64 GPUs with all 2,016 links, and one more",
                        "exit 3 at the 65th [[gpus]] entry (or the 2,017th [[links]] entry) at once; 64 GPUs load, "
                        "with labels, metrics and --explain, under 256 MiB");
}

TEST_CASE("readers-content: a tmpfs /dev/shm mounted with size=0 has no limit, and is not too small",
          "[readers-content]") {
    if (::geteuid() != 0 || e2e::run("unshare", {"-m", "true"}).exit_code != 0) {
        WARN("skipped: a private mount namespace (unshare -m) with its own /dev/shm needs root");
        return;
    }
    TempDir dir;
    auto run_with_shm = [&](const std::string& options) {
        return e2e::run("unshare", {"-m", "sh", "-c",
                                    "mount -t tmpfs -o " + options + " provision-test /dev/shm && exec \"$@\"", "sh",
                                    PROVISION_BINARY, "--gpu-fixture", e2e::gpu_fixture("h100"), "--json", "--explain",
                                    "--site-packages", e2e::site_packages("torch-only"), "--env-file", dir.file("env")});
    };
    // tmpfs(5): "size=0 means no limit" (and so does nr_blocks=0); statfs then reports 0 blocks.
    for (const std::string options : {"size=0", "nr_blocks=0"}) {
        INFO(options);
        const auto result = run_with_shm(options);
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(e2e::findings_of(report, "shm_too_small").empty());
        CHECK(report["verdict"] == "ok");
        CHECK(report["container"]["shm_unlimited"] == true);
        CHECK(report["container"]["shm_bytes"].is_null());
        CHECK(has(result.err, "Container: /dev/shm without a size limit"));
    }
    // A limit is still read and weighed.
    const auto small = run_with_shm("size=64m");
    const auto report = e2e::report(small);
    CHECK(report["container"]["shm_unlimited"] == false);
    CHECK(report["container"]["shm_bytes"] == 64 * 1024 * 1024);
    CHECK(e2e::findings_of(report, "shm_too_small").size() == 1);
    reliability::record("container", "/dev/shm a tmpfs mounted with size=0 (or nr_blocks=0): no limit",
                        "exit 0, ok, shm_unlimited true, no shm_too_small; a 64 MiB tmpfs still is");
}

namespace {

// KEY -> how many lines of the NFD feature file set it.
std::map<std::string, int> label_lines(const std::string& path) {
    std::map<std::string, int> keys;
    std::istringstream lines(e2e::read_file(path));
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] != '#') keys[line.substr(0, line.find('='))] += 1;
    return keys;
}

}  // namespace

TEST_CASE("readers-content: a recipe feature named like a built-in node label is refused where it is defined",
          "[readers-content]") {
    for (const std::string name : {"validated", "verdict", "gpu.count", "p2p", "attention.flash3"}) {
        INFO(name);
        TempDir dir;
        const std::string recipe = dir.file("site.toml");
        // A feature that would always be proven: no checks to fail.
        e2e::write_file(recipe, "# the site's own feature\n[features.\"" + name + "\"]\ndescription = \"mine\"\n");
        const auto result =
            run_on(dir, e2e::gpu_fixture("8x-h100"), {"--recipe", recipe, "--node-labels", dir.file("labels")});
        INFO(result.err);
        CHECK(result.exit_code == 3);
        CHECK(has(result.err, recipe + ":2:1: [features." + name + "]: "));
        // The labels of the refused run: each key once, and it did not validate the node.
        const auto keys = label_lines(dir.file("labels"));
        for (const auto& [key, count] : keys) {
            INFO(key);
            CHECK(count == 1);
        }
        CHECK(has(e2e::read_file(dir.file("labels")), "provision/validated=false\n"));
        CHECK(has(e2e::read_file(dir.file("labels")), "provision/error=invalid-input\n"));
    }
    reliability::record("recipe input",
                        "a feature named validated, verdict, gpu.count, p2p or attention.flash3 (a built-in label)",
                        "exit 3 at the feature's file:line:column; the labels say each key once, validated=false");
}

TEST_CASE("readers-content: an empty or invalid [node_labels] prefix is a recipe error naming the key",
          "[readers-content]") {
    struct Case {
        std::string prefix;
        std::string why;
    };
    for (const Case& input : std::vector<Case>{{"", "the prefix is empty"},
                                               {"Gpu.Example.com", "the prefix holds 'G'"},
                                               {"node.kubernetes.io", "a namespace Kubernetes keeps for itself"}}) {
        INFO("prefix \"" << input.prefix << "\"");
        TempDir dir;
        const std::string recipe = dir.file("site.toml");
        e2e::write_file(recipe, "[node_labels]\nprefix = \"" + input.prefix + "\"\n");
        // With labels, and without them: the recipe is wrong either way.
        for (const bool labels : {true, false}) {
            std::vector<std::string> extra{"--recipe", recipe};
            if (labels) extra.insert(extra.end(), {"--node-labels", dir.file("labels")});
            const auto result = run_on(dir, e2e::gpu_fixture("h100"), extra);
            INFO(result.err);
            CHECK(result.exit_code == 3);
            CHECK(has(result.err, recipe + ":2:10: [node_labels] prefix \"" + input.prefix +
                                      "\" cannot name Kubernetes labels: "));
            CHECK(has(result.err, input.why));
        }
        // The refused run's labels, under the default prefix, say so.
        const std::string written = e2e::read_file(dir.file("labels"));
        CHECK(has(written, "provision/verdict=failed\n"));
        CHECK(has(written, "provision/error=invalid-input\n"));
    }
    reliability::record("recipe input", "[node_labels] prefix \"\", \"Gpu.Example.com\" or \"node.kubernetes.io\"",
                        "exit 3 at the key's file:line:column, with or without --node-labels; the labels say "
                        "invalid-input under the default prefix");
}

namespace {

// A Python 3.12 venv at `root` whose `extensions` (NAME==VERSION) each carry a
// module built for CPython 3.10; returns its bin/python3.
std::string venv_with_extensions_for_310(const std::string& root, const std::vector<std::string>& extensions) {
    const std::string site = root + "/lib/python3.12/site-packages";
    auto install = [&](const std::string& dist, const std::string& record) {
        const auto split = dist.find("==");
        const std::string name = dist.substr(0, split), version = dist.substr(split + 2);
        const std::string info = fmt::format("{}/{}-{}.dist-info", site, name, version);
        std::filesystem::create_directories(info);
        e2e::write_file(info + "/METADATA", fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
        if (!record.empty()) e2e::write_file(info + "/RECORD", record);
    };
    for (const char* dist : {"torch==2.11.0", "triton==3.5.0"}) install(dist, "");
    for (const auto& dist : extensions) {
        const std::string module = dist.substr(0, dist.find("=="));
        install(dist, fmt::format("{}/__init__.py,,\n{}/_C.cpython-310-x86_64-linux-gnu.so,,\n", module, module));
    }
    e2e::write_file(root + "/pyvenv.cfg", "home = /nonexistent/bin\ninclude-system-site-packages = false\n"
                                          "version = 3.12.3\n");
    const std::string python = root + "/bin/python3";
    std::filesystem::create_directories(root + "/bin");
    e2e::write_file(python, "#!/bin/sh\nexit 0\n");
    ::chmod(python.c_str(), 0755);
    return python;
}

// Each sample line of a textfile by family: NAME -> the lines' label sets
// ("NAME{...}"), and their values.
std::map<std::string, std::vector<std::pair<std::string, double>>> samples_by_family(const std::string& text) {
    std::map<std::string, std::vector<std::pair<std::string, double>>> families;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line[0] == '#') continue;
        const std::string series = line.substr(0, line.rfind(' '));
        families[series.substr(0, series.find('{'))].emplace_back(series,
                                                                   std::stod(line.substr(line.rfind(' ') + 1)));
    }
    return families;
}

}  // namespace

TEST_CASE("readers-content: the metrics never repeat a label set: findings alike are one sample counting them",
          "[readers-content]") {
    TempDir dir;
    const std::string python = venv_with_extensions_for_310(
        dir.file("venv"), {"flash_attn==2.8.3", "sageattention==2.2.0", "xformers==0.0.32"});
    const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--json", "--python", python,
                                        "--env-file", dir.file("env"), "--metrics", dir.file("provision.prom")},
                                       {{"PATH", dir.file("no-bin")}, {"HOME", dir.file("no-home")}});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    const auto mismatches = e2e::findings_of(report, "python_mismatch");
    REQUIRE(mismatches.size() == 3);
    const auto families = samples_by_family(e2e::read_file(dir.file("provision.prom")));
    for (const auto& [family, samples] : families) {
        std::set<std::string> seen;
        for (const auto& [series, value] : samples) {
            INFO(series);
            CHECK(seen.insert(series).second);
        }
    }
    // One sample of 3, as provision_findings and the report count them.
    double degraded_samples = 0, degraded_total = -1;
    for (const auto& [series, value] : families.at("provision_finding")) {
        if (series == "provision_finding{signal=\"python_mismatch\",level=\"degraded\"}") CHECK(value == 3);
        if (has(series, "level=\"degraded\"")) degraded_samples += value;
    }
    for (const auto& [series, value] : families.at("provision_findings"))
        if (series == "provision_findings{level=\"degraded\"}") degraded_total = value;
    std::size_t degraded_findings = 0;
    for (const auto& finding : report["findings"]) degraded_findings += finding["level"] == "degraded" ? 1 : 0;
    CHECK(degraded_total == static_cast<double>(degraded_findings));
    CHECK(degraded_samples == degraded_total);
    reliability::record("metrics", "three packages built for another Python: three python_mismatch findings without a GPU",
                        "one provision_finding sample of 3, no family repeats a label set, provision_findings agrees");
}
