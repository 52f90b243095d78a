// Flags a workload recipe appends to the handed-off command, end to end: a
// recipe flag with a separate value, and the user's own flag in either form.
#include <catch2/catch.hpp>

#include "harness.h"
#include "workload_fixtures.h"

namespace {

// A workload whose recipe writes the flag and its value as two arguments and
// names no conflicting flags: the flag alone must stop provision adding it.
const char* kRecipe = R"([workloads.server]
description = "a server that takes --attention-backend NAME"

[workloads.server.preference]
default = ["sdpa", "eager"]
cpu = ["eager"]

[workloads.server.arguments]
sdpa = ["--attention-backend", "torch_native", "--log-attention"]
)";

std::vector<std::string> options(const e2e::TempDir& dir) {
    e2e::write_file(dir.file("server.toml"), kRecipe);
    auto args = workload_e2e::options(dir, "server", "ampere", {e2e::site_packages("torch-only")});
    args.insert(args.end(), {"--recipe", dir.file("server.toml")});
    return args;
}

}  // namespace

TEST_CASE("a recipe flag with a separate value is appended whole") {
    e2e::TempDir dir;
    const std::vector<std::string> command{"serve.py", "--port", "8000"};
    const auto handoff = workload_e2e::hand_off(options(dir), command, {});
    REQUIRE(handoff.result.exit_code == 0);
    CHECK(handoff.arguments ==
          workload_e2e::joined(command, {"--attention-backend", "torch_native", "--log-attention"}));
}

TEST_CASE("the user's own flag, with a separate value or with '=', leaves no stray value behind") {
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"serve.py", "--attention-backend", "triton"}, {"serve.py", "--attention-backend=triton"}}) {
        INFO(command.back());
        e2e::TempDir dir;
        const auto handoff = workload_e2e::hand_off(options(dir), command, {});
        REQUIRE(handoff.result.exit_code == 0);
        CHECK(handoff.arguments == workload_e2e::joined(command, {"--log-attention"}));
    }
}
