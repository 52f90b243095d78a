// Recipe mistakes found at load time (so in --check) with file:line:column:
// environment variable names the shell cannot take, lists naming an entry
// twice, and sensitive variables (LD_PRELOAD, BASH_ENV, CUDA_VISIBLE_DEVICES,
// ...) without the recipe's allow_sensitive.  Loading stays linear in the
// recipe's size.
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

e2e::Result check_with_recipe(const TempDir& dir, const std::string& recipe_text) {
    const std::string recipe = dir.file("user.toml");
    e2e::write_file(recipe, recipe_text);
    return e2e::provision({"--check", "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                           e2e::site_packages("all"), "--recipe", recipe});
}

// CPU seconds used by the children this process has waited for: unlike
// wall time, not inflated by a busy machine.
double children_cpu_seconds() {
    rusage usage {};
    ::getrusage(RUSAGE_CHILDREN, &usage);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

TEST_CASE("--check refuses environment variable names the shell cannot take, at file:line:column") {
    struct Case {
        std::string toml;
        std::string name;
        std::string position;
    };
    const std::vector<Case> cases = {
        {"[workloads.generic.env]\n\"A=B\" = \"1\"\n", "A=B", ":2:1:"},
        {"[workloads.generic.env]\nOK = \"1\"\n1ABC = \"1\"\n", "1ABC", ":3:1:"},
        {"[workloads.generic.gpu_env]\n\"A B\" = \"1\"\n", "A B", ":2:1:"},
        {"[workloads.generic.env]\n\"\" = \"1\"\n", "", ":2:1:"},
        {"[features.tf32.env_enabled]\n\"X-Y\" = \"1\"\n", "X-Y", ":2:1:"},
        {"[workloads.generic.mechanism_env.\"BAD NAME\"]\nflash3 = \"x\"\n", "BAD NAME", ":1:"},
    };
    for (const auto& c : cases) {
        TempDir dir;
        INFO(c.toml);
        const auto result = check_with_recipe(dir, c.toml);
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains(dir.file("user.toml") + c.position));
        CHECK_THAT(result.err, Catch::Contains(fmt::format("'{}'", c.name)) &&
                                   Catch::Contains("is not an environment variable name"));
    }
    reliability::record("recipe input", "env variable names \"A=B\", \"1ABC\", \"A B\", \"\" in a recipe",
                        "exit 3 at load time (and in --check) naming file:line:column");
}

TEST_CASE("a list naming an entry twice is refused with both places; large recipes load in linear time") {
    TempDir dir;
    SECTION("a duplicate in a preference list") {
        const auto result = check_with_recipe(dir, "[workloads.generic.preference]\nhopper = [\"flash2\", "
                                                   "\"sdpa\",\n  \"flash2\"]\n");
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains(dir.file("user.toml") + ":3:3: 'flash2' appears twice in "
                                                                       "'preference.hopper' of [workloads.generic] "
                                                                       "(first at " +
                                               dir.file("user.toml") + ":2:11)"));
        reliability::record("recipe input", "a preference list naming a mechanism twice",
                            "exit 3 naming file:line:column of both");
    }
    // Linear, not fast: ten times the entries may cost at most 40 times the
    // CPU (a quadratic loader pays 100 times), so the check holds in a
    // sanitizer build too.  The times themselves are the benchmark's.
    SECTION("14,500 and 145,000 entries in a preference list: refused, in linear time") {
        double seconds[2] = {};
        for (const int count : {14500, 145000}) {
            std::string list;
            for (int i = 0; i < count; ++i) list += i == 0 ? "\"sdpa\"" : ",\"sdpa\"";  // 145,000: 0.97 MiB
            const double before = children_cpu_seconds();
            const auto result = check_with_recipe(dir, "[workloads.generic.preference]\nhopper = [" + list + "]\n");
            seconds[count == 145000] = children_cpu_seconds() - before;
            INFO(count << " entries: " << seconds[count == 145000] << " s of CPU");
            CHECK(result.exit_code == 3);
            CHECK_THAT(result.err, Catch::Contains("appears twice"));
        }
        INFO("14,500 entries: " << seconds[0] << " s, 145,000: " << seconds[1] << " s of CPU");
        CHECK(seconds[1] < 40 * std::max(seconds[0], 0.01));
        reliability::record("recipe input", "145,000 duplicate entries in a preference list (0.97 MiB)",
                            "exit 3 at the second entry, in linear time (was over 120 s)");
    }
    SECTION("4,000 and 40,000 env variables in a workload recipe load and are written in linear time") {
        double seconds[2] = {};
        for (const int count : {4000, 40000}) {
            std::string recipe = "[workloads.generic.env]\n";
            for (int i = 0; i < count; ++i) recipe += fmt::format("V{} = \"{}\"\n", i, i);
            const std::string path = dir.file("big-env.toml");
            e2e::write_file(path, recipe);
            const double before = children_cpu_seconds();
            const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                                e2e::site_packages("all"), "--no-validate", "--recipe", path,
                                                "--env-file", dir.file(".env_settings")});
            seconds[count == 40000] = children_cpu_seconds() - before;
            INFO(count << " variables: " << seconds[count == 40000] << " s of CPU");
            CHECK(result.exit_code == 0);
            const std::string last = fmt::format("V{}", count - 1);
            CHECK(e2e::source_env_file(dir.file(".env_settings"), {last}).at(last) == std::to_string(count - 1));
        }
        INFO("4,000 variables: " << seconds[0] << " s, 40,000: " << seconds[1] << " s of CPU");
        CHECK(seconds[1] < 40 * std::max(seconds[0], 0.01));
        reliability::record("recipe input", "40,000 env variables in one recipe",
                            "loaded and written in linear time (was 3.4 s)");
    }
}

TEST_CASE("loader, start-up and device-selection variables need allow_sensitive in the recipe, and warn") {
    TempDir dir;
    SECTION("without allow_sensitive: exit 3 at file:line:column, in --check too") {
        for (const char* name : {"LD_PRELOAD", "BASH_ENV", "CUDA_VISIBLE_DEVICES", "PYTHONSTARTUP"}) {
            INFO(name);
            const auto result =
                check_with_recipe(dir, fmt::format("[workloads.generic.env]\nOK = \"1\"\n{} = \"x\"\n", name));
            CHECK(result.exit_code == 3);
            CHECK_THAT(result.err, Catch::Contains(dir.file("user.toml") + ":3:1: '" + name + "'") &&
                                       Catch::Contains("allow_sensitive"));
        }
        reliability::record("recipe input", "a recipe setting LD_PRELOAD, BASH_ENV, PYTHONSTARTUP or "
                                            "CUDA_VISIBLE_DEVICES without allow_sensitive",
                            "exit 3 at load time naming file:line:column and allow_sensitive");
    }
    SECTION("with allow_sensitive: written, with a warning") {
        const std::string recipe = dir.file("allowed.toml");
        e2e::write_file(recipe, "[workloads.generic]\nallow_sensitive = [\"LD_PRELOAD\"]\n"
                                "[workloads.generic.env]\nLD_PRELOAD = \"/opt/lib/libtcmalloc.so\"\n");
        const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                            e2e::site_packages("all"), "--no-validate", "--recipe", recipe,
                                            "--env-file", dir.file(".env_settings")});
        INFO(result.err);
        CHECK(result.exit_code == 0);
        CHECK_THAT(result.err, Catch::Contains("warning: a recipe sets LD_PRELOAD=/opt/lib/libtcmalloc.so"));
        CHECK(e2e::source_env_file(dir.file(".env_settings"), {"LD_PRELOAD"}).at("LD_PRELOAD") ==
              "/opt/lib/libtcmalloc.so");
        reliability::record("recipe input", "a recipe setting LD_PRELOAD with allow_sensitive = [\"LD_PRELOAD\"]",
                            "written, with a warning in the summary");
    }
    SECTION("CUDA_VISIBLE_DEVICES from a recipe that contradicts the GPUs the decision was made for: exit 3") {
        const std::string recipe = dir.file("devices.toml");
        e2e::write_file(recipe, "[workloads.generic]\nallow_sensitive = [\"CUDA_VISIBLE_DEVICES\"]\n"
                                "[workloads.generic.env]\nCUDA_VISIBLE_DEVICES = \"7\"\n");
        const std::vector<std::string> args = {"--gpu-fixture", e2e::gpu_fixture("8x-h100"), "--site-packages",
                                               e2e::site_packages("all"), "--no-validate", "--recipe", recipe,
                                               "--env-file", dir.file(".env_settings")};
        const auto result = e2e::provision(args);
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains("a recipe sets CUDA_VISIBLE_DEVICES=7") &&
                                   Catch::Contains("CUDA_VISIBLE_DEVICES unset"));
        CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
        // The same value as the environment's changes nothing, and a user's own value is kept.
        CHECK(e2e::provision(args, {{"CUDA_VISIBLE_DEVICES", "7"}}).exit_code == 0);
        const auto kept = e2e::provision(args, {{"CUDA_VISIBLE_DEVICES", "0"}});
        CHECK(kept.exit_code == 0);
        CHECK_THAT(kept.err, Catch::Contains("CUDA_VISIBLE_DEVICES=0 kept from the environment"));
        reliability::record("recipe input", "a recipe setting CUDA_VISIBLE_DEVICES=7 (allowed) on 8 GPUs, none hidden",
                            "exit 3: the workload would see other GPUs than the decision was made for");
    }
}
