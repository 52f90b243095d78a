// Every class of bad recipe and fixture input through the binary: each exits
// 3 before anything is written, names the file (and line, where the input
// has one), and leaves the old env file as it was.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

struct BadInput {
    std::string what;      // the class of input, for the reliability table
    std::string contents;  // the file
    std::string expected;  // in the message, besides the file's name
    bool has_line;         // the message names file:line
};

// Runs provision over an old env file; checks exit 3, the message and that
// the old file stays.
void expect_refused(const TempDir& dir, const std::vector<std::string>& args, const std::string& file,
                    const BadInput& input) {
    INFO(input.what);
    const std::string env_file = dir.file(".env_settings");
    e2e::write_file(env_file, "export OLD='kept'\n");
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--site-packages", e2e::site_packages("all"), "--env-file", env_file});
    const auto result = e2e::provision(all);
    INFO(result.err);
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains(input.has_line ? file + ":" : file));
    CHECK_THAT(result.err, Catch::Contains(input.expected));
    CHECK(e2e::read_file(env_file) == "export OLD='kept'\n");
}

}  // namespace

TEST_CASE("bad recipes: exit 3 naming the file, the old env file stays") {
    const std::vector<BadInput> inputs = {
        {"malformed recipe TOML (unterminated table header)", "[mechanisms.flash2\nmin = 1\n", "", true},
        {"recipe with an unknown key", "[mechanisms.flash2]\nmin_compute_capabilty = \"8.0\"\n",
         "did you mean 'min_compute_capability'?", true},
        {"recipe value of the wrong type", "[workloads.generic]\noverride_variables = \"ONE\"\n",
         "must be an array of strings", true},
        {"recipe with a bad compute capability", "[mechanisms.flash2]\nmin_compute_capability = \"eight\"\n",
         "compute capability like", true},
        {"recipe with a bad package requirement", "[mechanisms.flash2]\npackages = [\"flash-attn>>2\"]\n",
         "bad package requirement", true},
        {"recipe naming an unknown check", "[mechanisms.flash2]\nchecks = [\"attention.bf17\"]\n",
         "unknown check 'attention.bf17'", true},
        {"recipe naming an unknown architecture", "[workloads.generic.preference]\nhoper = [\"flash3\"]\n",
         "did you mean 'hopper'?", true},
        {"recipe file that is not UTF-8", "[mechanisms.flash2]\ndescription = \"\xff\xfe\"\n", "", true},
    };
    for (const auto& input : inputs) {
        TempDir dir;
        const std::string recipe = dir.file("user.toml");
        e2e::write_file(recipe, input.contents);
        expect_refused(dir, {"--gpu-fixture", e2e::gpu_fixture("h100"), "--recipe", recipe}, recipe, input);
        reliability::record("recipe input", input.what, "exit 3 naming file:line; the old env file stays");
    }
    TempDir dir;
    const std::string missing = dir.file("no-such-recipe.toml");
    expect_refused(dir, {"--gpu-fixture", e2e::gpu_fixture("h100"), "--recipe", missing}, missing,
                   {"", "", "not found", false});
    reliability::record("recipe input", "--recipe path that does not exist",
                        "exit 3 naming the path; the old env file stays");
}

TEST_CASE("bad GPU fixtures: exit 3 naming the file, the old env file stays") {
    const std::vector<BadInput> inputs = {
        {"malformed fixture TOML (unterminated string)", "", "", true},
        {"fixture value of the wrong type (memory_mib = \"24GB\")", "", "memory_mib", true},
        {"fixture with a malformed GPU UUID", "", "uuid", true},
        {"fixture GPU without a compute capability", "", "compute_capability", true},
        {"fixture with a misspelt key", "", "compute_capabilty", true},
        {"fixture with GPUs but no [driver]", "", "[driver]", true},
        {"fixture compute capability not MAJOR.MINOR (sm_90)", "", "sm_90", true},
    };
    const std::vector<std::string> files = {"bad-syntax",  "bad-type",           "bad-uuid",
                                            "missing-key", "unknown-key",        "gpus-without-driver",
                                            "bad-compute-capability"};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        TempDir dir;
        const std::string fixture = e2e::gpu_fixture(files[i]);
        expect_refused(dir, {"--gpu-fixture", fixture}, fixture, inputs[i]);
        reliability::record("fixture input", inputs[i].what, "exit 3 naming file:line; the old env file stays");
    }
    TempDir dir;
    const std::string missing = dir.file("no-such-machine.toml");
    expect_refused(dir, {"--gpu-fixture", missing}, missing, {"", "", "not found", false});
    reliability::record("fixture input", "--gpu-fixture path that does not exist",
                        "exit 3 naming the path; the old env file stays");
}
