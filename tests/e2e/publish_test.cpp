// --node-labels and --metrics end to end: the files of real runs, checked
// against Kubernetes' label rules (publish_support.h writes them out again)
// and by Debian's promtool; failed and refused runs replace what an
// earlier run published; a path that is not a regular file is left alone.
#include <sys/stat.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "publish_support.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using publish_test::read_valid_labels;

namespace {

// provision on a simulated machine with every package, writing the labels
// and the metrics into `dir`.
e2e::Result publish_run(const TempDir& dir, const std::string& fixture, std::vector<std::string> extra = {},
                        const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> args = {"--gpu-fixture", fixture, "--site-packages", e2e::site_packages("all"),
                                     "--env-file", dir.file(".env_settings"), "--node-labels", dir.file("labels"),
                                     "--metrics", dir.file("provision.prom")};
    args.insert(args.end(), extra.begin(), extra.end());
    return e2e::provision(args, env);
}

std::string write_fixture(const TempDir& dir, const std::string& name, const std::string& gpu_name,
                          const std::string& health = "") {
    std::string text = fmt::format(
        "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n[[gpus]]\nname = \"{}\"\ncompute_capability = "
        "\"9.0\"\nmemory_mib = 81559\nuuid = \"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n",
        gpu_name);
    if (!health.empty()) text += "\n[gpus.health]\n" + health + "\n";
    e2e::write_file(dir.file(name), text);
    return dir.file(name);
}

}  // namespace

TEST_CASE("the labels of every fixture in tests/fixtures/gpus follow Kubernetes' rules", "[publish]") {
    int fixtures = 0, stopped = 0;
    for (const auto& entry : std::filesystem::directory_iterator(e2e::source_path("tests/fixtures/gpus"))) {
        if (entry.path().extension() != ".toml") continue;
        TempDir dir;
        const auto result = publish_run(dir, entry.path());
        INFO(entry.path().filename() << ": exit " << result.exit_code << "\n" << result.err);
        ++fixtures;
        // Malformed fixtures stop the run (exit 3), and still replace the labels.
        REQUIRE(std::filesystem::exists(dir.file("labels")));
        const auto labels = read_valid_labels(dir.file("labels"));
        CHECK(labels.count("provision/verdict") == 1);
        CHECK(labels.count("provision/validated") == 1);
        CHECK(labels.count("provision/timestamp") == 1);
        if (result.exit_code == 3) {
            ++stopped;
            CHECK(labels.at("provision/error") == "invalid-input");
        } else {
            CHECK(labels.count("provision/gpu.count") == 1);
        }
        // Fixture GPUs are never validated.
        CHECK(labels.at("provision/validated") == "false");
    }
    CHECK(fixtures >= 25);
    CHECK(stopped >= 4);
    reliability::record("node labels", fmt::format("--node-labels on each of the {} GPU fixtures", fixtures),
                        "every key and value valid by Kubernetes' rules; malformed fixtures (exit 3) write "
                        "verdict=failed, error=invalid-input");
}

TEST_CASE("a hostile GPU name: labels stay valid, the product label is left out and noted", "[publish]") {
    TempDir dir;
    // Blanks, both quotes, 200 characters, non-ASCII, a would-be NFD directive.
    const std::string name = "NVIDIA \\\"H100\\\" it's GeForce\u00ae \u00e9t\u00e9 " + std::string(160, 'x') +
                             " # +no-label";
    const auto result = publish_run(dir, write_fixture(dir, "hostile.toml", name), {"--json"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto labels = read_valid_labels(dir.file("labels"));
    CHECK(labels.count("provision/gpu.product") == 0);
    CHECK(labels.at("provision/gpu.family") == "hopper");
    CHECK_THAT(result.err, Catch::Contains("note: node label left out: provision/gpu.product: "));
    CHECK_THAT(e2e::read_file(dir.file("labels")), Catch::Contains("\n# left out: provision/gpu.product: "));
    const auto report = e2e::report(result);
    bool warned = false;
    for (const auto& warning : report["warnings"])
        warned = warned || warning.get<std::string>().starts_with("node label left out: provision/gpu.product");
    CHECK(warned);
    reliability::record("node labels", "a GPU name with blanks, quotes, 200 characters, non-ASCII and '# +'",
                        "exit 0; gpu.product left out with a note (summary, JSON warnings, a comment in the "
                        "file); every other label valid",
                        "the product label");
}

TEST_CASE("promtool check metrics passes the files of ok, degraded, failed, multi-GPU, CPU-only and stopped runs",
          "[publish]") {
    const std::string promtool = publish_test::installed("promtool");
    if (promtool.empty()) {
        WARN("skipped: promtool is not installed (Debian's package prometheus; scripts/install-deps installs it)");
        return;
    }
    TempDir dir;
    struct Run {
        std::string what, fixture;
        int exit_code;
        std::string verdict;
    };
    for (const auto& run : std::vector<Run>{
             {"ok", e2e::gpu_fixture("h100"), 0, "ok"},
             {"degraded", write_fixture(dir, "hot.toml", "NVIDIA H100 80GB HBM3", "thermal_slowdown = true"), 0,
              "degraded"},
             {"failed", e2e::gpu_fixture("h100-unhealthy"), 5, "failed"},
             {"8 GPUs", e2e::gpu_fixture("8x-h100"), 0, "ok"},
             {"A100 and T4", e2e::gpu_fixture("mixed-a100-t4"), 0, "ok"},
             {"CPU-only", e2e::gpu_fixture("cpu-only"), 0, "ok"},
             {"stopped: malformed fixture", e2e::gpu_fixture("bad-syntax"), 3, "failed"},
         }) {
        const auto result = publish_run(dir, run.fixture);
        INFO(run.what << "\n" << result.err);
        CHECK(result.exit_code == run.exit_code);
        const auto checked = publish_test::promtool_check(promtool, dir.file("provision.prom"));
        INFO(e2e::read_file(dir.file("provision.prom")));
        CHECK(checked.exit_code == 0);
        CHECK(checked.out + checked.err == "");
        CHECK_THAT(e2e::read_file(dir.file("provision.prom")),
                   Catch::Contains(fmt::format("provision_verdict{{verdict=\"{}\"}} 1\n", run.verdict)));
        CHECK_THAT(e2e::read_file(dir.file("provision.prom")),
                   Catch::Contains(fmt::format("provision_exit_code {}\n", run.exit_code)));
    }
    reliability::record("metrics", "promtool check metrics on 7 runs: ok, degraded, failed (exit 5), 8 GPUs, "
                                   "A100 + T4, CPU-only, malformed fixture (exit 3)",
                        "exit 0, no lint complaint; verdict and exit status in each file");
}

TEST_CASE("a failed or refused run replaces yesterday's validated=true with labels that say so", "[publish]") {
    TempDir dir;
    const std::string yesterday = "provision/validated=true\nprovision/verdict=ok\nprovision/attention.flash3=true\n";
    struct Run {
        std::string what;
        std::vector<std::string> args;
        std::map<std::string, std::string> env;
        int exit_code;
        std::string error;  // the error label, "" when the run had a report
    };
    for (const auto& run : std::vector<Run>{
             {"an unhealthy GPU (exit 5)", {"--gpu-fixture", e2e::gpu_fixture("h100-unhealthy")}, {}, 5, ""},
             {"an override that cannot serve (exit 4)",
              {"--gpu-fixture", e2e::gpu_fixture("t4")},
              {{"PROVISION_ATTENTION", "flash3"}},
              4,
              ""},
             {"a malformed fixture (exit 3)", {"--gpu-fixture", e2e::gpu_fixture("bad-syntax")}, {}, 3,
              "invalid-input"},
             {"a bad option value (exit 2)", {"--validate", "sometimes"}, {}, 2, "usage"},
             {"an unknown flag, the labels' path from the variable (exit 2)",
              {"--no-such-flag"},
              {{"PROVISION_NODE_LABELS", dir.file("labels")}},
              2,
              "usage"},
             {"a bad variable (exit 2)", {}, {{"PROVISION_VALIDATE", "sometimes"}}, 2, "usage"},
         }) {
        e2e::write_file(dir.file("labels"), yesterday);
        std::vector<std::string> args = run.args;
        if (!run.env.count("PROVISION_NODE_LABELS")) {
            args.insert(args.begin(), dir.file("labels"));
            args.insert(args.begin(), "--node-labels");
        }
        args.insert(args.end(), {"--site-packages", e2e::site_packages("all"), "--env-file", dir.file(".env")});
        const auto result = e2e::provision(args, run.env);
        INFO(run.what << "\n" << result.err);
        CHECK(result.exit_code == run.exit_code);
        const auto labels = read_valid_labels(dir.file("labels"));
        CHECK(labels.at("provision/validated") == "false");
        CHECK(labels.at("provision/verdict") == "failed");
        CHECK(labels.count("provision/attention.flash3") == (run.error.empty() ? 1 : 0));
        if (!run.error.empty()) CHECK(labels.at("provision/error") == run.error);
        else CHECK(labels.count("provision/error") == 0);
    }
    reliability::record("node labels", "a file saying validated=true, then runs that exit 5, 4, 3 and 2",
                        "each replaces it: validated=false, verdict=failed (exits 2 and 3: error=usage, "
                        "error=invalid-input)",
                        "yesterday's labels (by design)");
}

TEST_CASE("a labels or metrics path that is not a regular file is left as it is", "[publish]") {
    TempDir dir;
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0644) == 0);
    std::filesystem::create_directory(dir.file("folder"));
    std::filesystem::create_symlink(dir.file("elsewhere"), dir.file("link"));
    for (const auto& [target, found] : std::vector<std::pair<std::string, std::string>>{
             {"fifo", "a FIFO"}, {"folder", "a folder"}, {"link", "a symbolic link"}}) {
        for (const char* flag : {"--node-labels", "--metrics"}) {
            const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                                e2e::site_packages("all"), "--env-file", dir.file(".env"), flag,
                                                dir.file(target)});
            INFO(flag << " " << target << "\n" << result.err);
            CHECK(result.exit_code == 6);
            CHECK_THAT(result.err, Catch::Contains("it is " + found));
        }
    }
    CHECK(std::filesystem::is_fifo(dir.file("fifo")));
    CHECK(std::filesystem::is_empty(dir.file("folder")));
    CHECK(std::filesystem::is_symlink(dir.file("link")));
    CHECK_FALSE(std::filesystem::exists(dir.file("elsewhere")));
    // With a COMMAND the workload still starts, with a warning.
    const auto handoff = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                         e2e::site_packages("all"), "--env-file", dir.file(".env"), "--node-labels",
                                         dir.file("fifo"), "--", "/bin/sh", "-c", "exit 7"});
    CHECK(handoff.exit_code == 7);
    CHECK_THAT(handoff.err, Catch::Contains("warning: cannot write the node labels"));
    reliability::record("node labels", "--node-labels and --metrics at a FIFO, a folder, a symbolic link",
                        "exit 6 naming what is there, left untouched; with a COMMAND a warning and the workload "
                        "starts");
}

TEST_CASE("--node-labels, --metrics and --repeat: usage errors", "[publish]") {
    TempDir dir;
    const auto fixture = e2e::gpu_fixture("h100");
    for (const auto& [args, env, words] :
         std::vector<std::tuple<std::vector<std::string>, std::map<std::string, std::string>, std::string>>{
             {{"--node-labels", ""}, {}, "--node-labels is empty"},
             {{}, {{"PROVISION_METRICS", ""}}, "PROVISION_METRICS is empty"},
             {{"--repeat", "0"}, {}, "--repeat"},
             {{}, {{"PROVISION_REPEAT", "soon"}}, "PROVISION_REPEAT"},
             {{"--repeat", "60", "--", "/bin/true"}, {}, "--repeat keeps provision running and never starts a COMMAND"},
             {{"/bin/true"}, {{"PROVISION_REPEAT", "60"}}, "PROVISION_REPEAT keeps provision running"},
             {{"--node-labels", dir.file("out"), "--metrics", dir.file("out")}, {}, "name the same file"},
         }) {
        std::vector<std::string> all = {"--gpu-fixture", fixture, "--env-file", dir.file(".env")};
        all.insert(all.begin(), args.begin(), args.end());
        const auto result = e2e::provision(all, env);
        INFO(fmt::format("{}", fmt::join(args, " ")) << "\n" << result.err);
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(words));
    }
}

namespace {

// Every file and folder under `root` (links not followed) with what it holds:
// a regular file's contents, a link's target, "(folder)" or "(other)".
std::map<std::string, std::string> tree(const std::string& root) {
    std::map<std::string, std::string> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        const auto status = entry.symlink_status();
        std::string what = "(other)";
        if (std::filesystem::is_symlink(status)) what = "-> " + std::filesystem::read_symlink(entry.path()).string();
        else if (std::filesystem::is_directory(status)) what = "(folder)";
        else if (std::filesystem::is_regular_file(status)) what = e2e::read_file(entry.path());
        found[entry.path().lexically_relative(root).string()] = what;
    }
    return found;
}

}  // namespace

TEST_CASE("two outputs that are one file, however spelled, are a usage error that writes nothing", "[publish]") {
    TempDir dir;
    const std::string d = dir.path();
    std::filesystem::create_directories(d + "/sub");
    std::filesystem::create_directories(d + "/folder");
    e2e::write_file(d + "/real", "real\n");
    e2e::write_file(d + "/env", "export A='1'\n");
    std::filesystem::create_symlink(d + "/real", d + "/link");
    std::filesystem::create_hard_link(d + "/env", d + "/hard");
    std::filesystem::create_directory_symlink(d + "/folder", d + "/alias");
    struct Case {
        std::string what;
        std::vector<std::string> args;
        std::map<std::string, std::string> env = {};
        std::string words = "name the same file";
    };
    for (const auto& run : std::vector<Case>{
             {"a relative name and ./ (run from the folder)", {"--node-labels", "same", "--metrics", "./same"}},
             {"the env file and the labels, relative and absolute",
              {"--env-file", "x.env", "--node-labels", d + "/x.env"}},
             {"'..' through a folder that exists", {"--node-labels", d + "/sub/../out", "--metrics", d + "/out"}},
             {"a symbolic link and its target", {"--node-labels", d + "/link", "--metrics", d + "/real"}},
             {"a hard link and the env file", {"--env-file", d + "/env", "--metrics", d + "/hard"}},
             {"a file not there yet, through a folder not there yet",
              {"--node-labels", d + "/new/x", "--metrics", d + "/./new//x"}},
             {"a folder's symbolic link", {"--node-labels", d + "/alias/x", "--metrics", d + "/folder/x"}},
             {"a variable and a flag", {"--metrics", d + "//v"}, {{"PROVISION_NODE_LABELS", d + "/v"}}},
             {"with another usage error besides", {"--node-labels", "same", "--metrics", "./same", "--repeat", "0"}},
             {"with a value the command-line parser refuses besides",
              {"--node-labels", "same", "--metrics", "./same", "--validate", "sometimes"},
              {},
              "--validate"},
         }) {
        const auto before = tree(d);
        std::vector<std::string> args = {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                         e2e::site_packages("all")};
        if (std::find(run.args.begin(), run.args.end(), "--env-file") == run.args.end())
            args.insert(args.end(), {"--env-file", d + "/settings.env"});
        args.insert(args.end(), run.args.begin(), run.args.end());
        e2e::RunOptions options;
        options.cwd = d;
        const auto result = e2e::run(PROVISION_BINARY, args, run.env, options);
        INFO(run.what << "\n" << result.err);
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(run.words));
        CHECK(tree(d) == before);  // nothing written, no folder made
    }
    // Two files side by side are two files.
    const auto apart = e2e::run(PROVISION_BINARY,
                                {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                 e2e::site_packages("all"), "--env-file", d + "/settings.env", "--node-labels",
                                 "same", "--metrics", "./other.prom"},
                                {}, d);
    INFO(apart.err);
    CHECK(apart.exit_code == 0);
    CHECK(std::filesystem::exists(d + "/same"));
    CHECK(std::filesystem::exists(d + "/other.prom"));
    reliability::record("node labels",
                        "two outputs naming one file: ./same and same, the env file by an absolute path, '..', a "
                        "symbolic link, a hard link, a file and a folder not there yet, a folder's link",
                        "exit 2 naming both, before anything is written: no file changed, no folder made");
}

TEST_CASE("an output path ending in '/' is a usage error before any folder is made", "[publish]") {
    TempDir dir;
    const std::string d = dir.path();
    for (const auto& [args, env, source] :
         std::vector<std::tuple<std::vector<std::string>, std::map<std::string, std::string>, std::string>>{
             {{"--node-labels", d + "/trailing/"}, {}, "--node-labels"},
             {{"--metrics", d + "/metrics/"}, {}, "--metrics"},
             {{"--env-file", d + "/env/"}, {}, "--env-file"},
             {{}, {{"PROVISION_NODE_LABELS", d + "/variable/"}}, "PROVISION_NODE_LABELS"},
             {{"--node-labels", d + "/dot/."}, {}, "--node-labels"},
             {{"--node-labels", d + "/refused/", "--validate", "sometimes"}, {}, "--validate"},
         }) {
        std::vector<std::string> all = {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                        e2e::site_packages("all"), "--metrics", d + "/provision.prom"};
        if (std::find(args.begin(), args.end(), "--env-file") == args.end())
            all.insert(all.end(), {"--env-file", d + "/settings.env"});
        all.insert(all.end(), args.begin(), args.end());
        const auto result = e2e::provision(all, env);
        INFO(fmt::format("{}", fmt::join(args, " ")) << "\n" << result.err);
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(source));
        CHECK(std::filesystem::is_empty(d));  // no folder made, and nothing else written either
    }
    reliability::record("node labels", "--node-labels, --metrics, --env-file (and a variable) ending in '/' or '/.'",
                        "exit 2 naming the flag, before anything is made or written");
}

TEST_CASE("provision_exit_code is the status the process exits with", "[publish]") {
    TempDir dir;
    std::string command = "exec \"$0\"";
    for (const auto& arg :
         std::vector<std::string>{"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                  e2e::site_packages("all"), "--env-file", dir.file(".env"), "--metrics",
                                  dir.file("provision.prom"), "--json"})
        command += " '" + arg + "'";
    // The report cannot be written to stdout: exit 6.
    const auto full = e2e::run("/bin/sh", {"-c", command + " >/dev/full", PROVISION_BINARY});
    INFO(full.err);
    CHECK(full.exit_code == 6);
    CHECK_THAT(e2e::read_file(dir.file("provision.prom")), Catch::Contains("\nprovision_exit_code 6\n"));
    // The COMMAND cannot be started: exit 127.
    const auto missing = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                         e2e::site_packages("all"), "--env-file", dir.file(".env"), "--metrics",
                                         dir.file("provision.prom"), "--", dir.file("no-such-command")});
    INFO(missing.err);
    CHECK(missing.exit_code == 127);
    CHECK_THAT(e2e::read_file(dir.file("provision.prom")), Catch::Contains("\nprovision_exit_code 127\n"));
    reliability::record("metrics", "--metrics with the report's stdout on /dev/full; with a COMMAND that does not exist",
                        "provision_exit_code 6 and 127: the status the process exits with");
}
