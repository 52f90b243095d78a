#include <catch2/catch.hpp>

#include "handoff/handoff.h"

using namespace provision;

TEST_CASE("workload arguments are appended unless the user already gave them or a conflicting flag") {
    WorkloadSpec comfy;
    comfy.arguments["flash2"] = {"--use-flash-attention"};
    comfy.arguments["sage"] = {"--use-sage-attention"};
    comfy.conflicting_arguments = {"--use-flash-attention", "--use-sage-attention", "--use-pytorch-cross-attention"};

    CHECK(workload_arguments(comfy, "flash2", {"python", "main.py", "--listen"}) ==
          std::vector<std::string>{"--use-flash-attention"});
    CHECK(workload_arguments(comfy, "flash2", {"python", "main.py", "--use-flash-attention"}).empty());
    CHECK(workload_arguments(comfy, "flash2", {"python", "main.py", "--use-sage-attention"}).empty());
    CHECK(workload_arguments(comfy, "eager", {"python", "main.py"}).empty());
}

TEST_CASE("a flag given as --flag=value counts as given") {
    WorkloadSpec sglang;
    sglang.arguments["flash3"] = {"--attention-backend", "fa3"};
    sglang.conflicting_arguments = {"--attention-backend"};
    CHECK(workload_arguments(sglang, "flash3", {"python", "-m", "sglang.launch_server", "--attention-backend=triton"})
              .empty());
    CHECK(workload_arguments(sglang, "flash3", {"python", "-m", "sglang.launch_server"}) ==
          std::vector<std::string>{"--attention-backend", "fa3"});
}
