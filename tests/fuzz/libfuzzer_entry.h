// The libFuzzer side of a target: runs one input through its entry point and
// turns a broken invariant or a stray exception into a crash that libFuzzer
// reports with the input.  (provision::Error is caught inside the targets,
// where it is an allowed answer.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "fuzz/fuzz_support.h"

namespace fuzz {

template <typename Target>
int run_libfuzzer_input(Target target, const std::uint8_t* data, std::size_t size) {
    try {
        target(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const BrokenInvariant& broken) {
        std::fprintf(stderr, "broken invariant: %s\n", broken.what());
        std::abort();
    } catch (const std::exception& error) {
        std::fprintf(stderr, "unexpected exception: %s\n", error.what());
        std::abort();
    }
    return 0;
}

}  // namespace fuzz
