// Fuzz target: the reader of NCCL's build string in a library, on hostile
// bytes, both as a whole library (its .rodata found through the ELF reader)
// and as raw bytes, and the reader of NCCL's version numbers.  Beyond "no
// crash, no sanitizer report, no hang": a build string found must be in the
// input, word for word, with a version and a CUDA made of the characters a
// version holds; the scan looks at each byte a bounded number of times
// (twice at most: the markers and the NULs it looks for cover disjoint
// ranges), whatever the markers and NULs; a version read is short and made
// of a version's characters.
#pragma once

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "nccl/nccl_library.h"
#include "nccl/nccl_version.h"

namespace fuzz::nccl_build {

inline void check_found(const provision::NcclBuild& build, std::string_view input) {
    FUZZ_CHECK(!build.version.empty() && !build.cuda.empty());
    FUZZ_CHECK(build.version.size() + build.cuda.size() < 100);
    const std::string text = "NCCL version " + build.version + "+cuda" + build.cuda;
    FUZZ_CHECK(input.find(text) != std::string_view::npos);
}

inline void check_version(std::string_view text) {
    const auto release = provision::parse_release(text);
    if (!release) return;
    FUZZ_CHECK(text.size() <= 64 && release->written >= 1 && release->written <= 3);
    FUZZ_CHECK(std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '_';
    }));
    for (const int part : release->parts) FUZZ_CHECK(part >= 0);
}

inline void one_input(std::string_view input) {
    std::uint64_t examined = 0;
    if (const auto build = provision::find_nccl_build_string(input, &examined)) check_found(*build, input);
    FUZZ_CHECK(examined <= 2 * input.size());
    auto source = std::make_shared<provision::native::MemorySource>(std::string(input), "libnccl.so.2");
    std::uint64_t read = 0;
    if (const auto build = provision::read_nccl_build(source, &read)) check_found(*build, input);
    // .rodata lies within the input; its windows overlap by 109 bytes each.
    FUZZ_CHECK(read <= 2 * (input.size() + 109 * (input.size() / (1 << 20) + 1)));
    check_version(input);
    check_version(input.substr(0, input.find('\n')));
}

}  // namespace fuzz::nccl_build
