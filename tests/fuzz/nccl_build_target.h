// Fuzz target: the reader of NCCL's build string, on hostile bytes, both as
// a whole library (its .rodata found through the ELF reader) and as raw
// bytes.  Beyond "no crash, no sanitizer report, no hang": a build string
// found must be in the input, word for word, with a version and a CUDA made
// of the characters a version holds.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "nccl/nccl_library.h"

namespace fuzz::nccl_build {

inline void check_found(const provision::NcclBuild& build, std::string_view input) {
    FUZZ_CHECK(!build.version.empty() && !build.cuda.empty());
    FUZZ_CHECK(build.version.size() + build.cuda.size() < 100);
    const std::string text = "NCCL version " + build.version + "+cuda" + build.cuda;
    FUZZ_CHECK(input.find(text) != std::string_view::npos);
}

inline void one_input(std::string_view input) {
    if (const auto build = provision::find_nccl_build_string(input)) check_found(*build, input);
    auto source = std::make_shared<provision::native::MemorySource>(std::string(input), "libnccl.so.2");
    if (const auto build = provision::read_nccl_build(source)) check_found(*build, input);
}

}  // namespace fuzz::nccl_build
