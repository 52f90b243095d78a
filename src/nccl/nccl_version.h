// Version numbers as NCCL and CUDA write them, read strictly: whole numbers
// joined by dots (MAJOR.MINOR.PATCH, or fewer), then at most a short tail
// (NCCL_SUFFIX "rc1", PEP 440's ".post1", a local "+cuda13.0").  Text that
// does not read so (METADATA's "abc", a number past nine digits, control
// characters, more than 64 bytes) is no version at all: unknown, never
// "0.0.0" and never cut to what atoi makes of it.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace provision {

struct ReleaseNumber {
    std::array<int, 3> parts{0, 0, 0};  // parts not written are 0
    int written = 0;                    // how many were written: 1 for "13", 3 for "2.28.9"
};

// `text` as a release number; nullopt when it does not read as one.
std::optional<ReleaseNumber> parse_release(std::string_view text);

// An NCCL version: a release number with at least MAJOR.MINOR.
std::optional<ReleaseNumber> parse_nccl_version(std::string_view text);

bool at_least(const ReleaseNumber& version, int major, int minor = 0, int patch = 0);

}  // namespace provision
