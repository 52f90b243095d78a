#include <catch2/catch.hpp>

#include "handoff/handoff.h"

using namespace provision;

TEST_CASE("workload arguments are appended unless the user already gave them or a conflicting flag") {
    WorkloadSpec comfy;
    comfy.arguments["flash2"] = {"--use-flash-attention"};
    comfy.arguments["sage"] = {"--use-sage-attention"};
    comfy.conflicting_arguments = {"--use-flash-attention", "--use-sage-attention", "--use-pytorch-cross-attention"};

    CHECK(workload_arguments(comfy, "flash2", "bfloat16", {"python", "main.py", "--listen"}) ==
          std::vector<std::string>{"--use-flash-attention"});
    CHECK(workload_arguments(comfy, "flash2", "bfloat16", {"python", "main.py", "--use-flash-attention"}).empty());
    CHECK(workload_arguments(comfy, "flash2", "bfloat16", {"python", "main.py", "--use-sage-attention"}).empty());
    CHECK(workload_arguments(comfy, "eager", "bfloat16", {"python", "main.py"}).empty());
}

TEST_CASE("a flag given as --flag=value counts as given") {
    WorkloadSpec sglang;
    sglang.arguments["flash3"] = {"--attention-backend", "fa3"};
    sglang.conflicting_arguments = {"--attention-backend"};
    CHECK(workload_arguments(sglang, "flash3", "bfloat16", {"python", "-m", "sglang.launch_server", "--attention-backend=triton"})
              .empty());
    CHECK(workload_arguments(sglang, "flash3", "bfloat16", {"python", "-m", "sglang.launch_server"}) ==
          std::vector<std::string>{"--attention-backend", "fa3"});
}

TEST_CASE("a recipe flag with a separate value is added whole or not at all") {
    WorkloadSpec sglang;  // no conflicting_arguments: the flag itself must be enough
    sglang.arguments["flash3"] = {"--attention-backend", "fa3"};
    const std::vector<std::string> base{"python", "-m", "sglang.launch_server"};
    auto with = [&](std::vector<std::string> extra) {
        auto command = base;
        command.insert(command.end(), extra.begin(), extra.end());
        return command;
    };
    CHECK(workload_arguments(sglang, "flash3", "bfloat16", with({"--attention-backend", "triton"})).empty());
    CHECK(workload_arguments(sglang, "flash3", "bfloat16", with({"--attention-backend=triton"})).empty());
    CHECK(workload_arguments(sglang, "flash3", "bfloat16", with({"--model", "m"})) ==
          std::vector<std::string>{"--attention-backend", "fa3"});
}

TEST_CASE("a recipe flag written --flag=value is not added when the user gave --flag in either form") {
    WorkloadSpec vllm;
    vllm.arguments["flex"] = {"--attention-backend=FLEX_ATTENTION", "--enforce-eager"};
    CHECK(workload_arguments(vllm, "flex", "bfloat16", {"vllm", "serve", "--attention-backend", "FLASHINFER"}) ==
          std::vector<std::string>{"--enforce-eager"});
    CHECK(workload_arguments(vllm, "flex", "bfloat16", {"vllm", "serve", "--attention-backend=FLASHINFER"}) ==
          std::vector<std::string>{"--enforce-eager"});
    CHECK(workload_arguments(vllm, "flex", "bfloat16", {"vllm", "serve", "--enforce-eager"}) ==
          std::vector<std::string>{"--attention-backend=FLEX_ATTENTION"});
}

TEST_CASE("several flags with values: only those the user gave are left out") {
    WorkloadSpec spec;
    spec.arguments["flash2"] = {"--backend", "fa", "--version", "2", "--quiet"};
    CHECK(workload_arguments(spec, "flash2", "bfloat16", {"run", "--version", "3"}) ==
          std::vector<std::string>{"--backend", "fa", "--quiet"});
    CHECK(workload_arguments(spec, "flash2", "bfloat16", {"run", "--quiet", "--backend=x"}) ==
          std::vector<std::string>{"--version", "2"});
    // A value of the user's that merely looks like the recipe's flag is no flag.
    CHECK(workload_arguments(spec, "flash2", "bfloat16", {"run", "--backend-extra"}) == spec.arguments["flash2"]);
    // The program's own name is not one of its arguments.
    CHECK(workload_arguments(spec, "flash2", "bfloat16", {"--quiet"}) == spec.arguments["flash2"]);
}

TEST_CASE("the dtype's flags are added after the mechanism's, unless the user gave them") {
    WorkloadSpec sglang;
    sglang.arguments["sdpa"] = {"--attention-backend=torch_native"};
    sglang.conflicting_arguments = {"--attention-backend"};
    sglang.dtype_arguments["float16"] = {"--dtype=half"};
    const std::vector<std::string> base{"python", "-m", "sglang.launch_server"};
    CHECK(workload_arguments(sglang, "sdpa", "float16", base) ==
          std::vector<std::string>{"--attention-backend=torch_native", "--dtype=half"});
    CHECK(workload_arguments(sglang, "sdpa", "bfloat16", base) ==
          std::vector<std::string>{"--attention-backend=torch_native"});
    // The user's own --dtype wins, in either form; an attention flag of theirs
    // stops only provision's attention flags.
    CHECK(workload_arguments(sglang, "sdpa", "float16", {"sglang", "--dtype", "bfloat16"}) ==
          std::vector<std::string>{"--attention-backend=torch_native"});
    CHECK(workload_arguments(sglang, "sdpa", "float16", {"sglang", "--dtype=float32"}) ==
          std::vector<std::string>{"--attention-backend=torch_native"});
    CHECK(workload_arguments(sglang, "sdpa", "float16", {"sglang", "--attention-backend", "triton"}) ==
          std::vector<std::string>{"--dtype=half"});
}
