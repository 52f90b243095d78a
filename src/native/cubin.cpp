#include "native/cubin.h"

#include <fmt/format.h>

namespace provision::native {

namespace {

constexpr std::uint8_t kAbiVersionV1 = 7;  // ELFABIVERSION_CUDA_V1
constexpr std::uint8_t kAbiVersionV2 = 8;  // ELFABIVERSION_CUDA_V2
constexpr std::uint32_t kAcceleratorsV1 = 0x800;  // EF_CUDA_ACCELERATORS_V1
// The lowest SM number of a real architecture (sm_20, Fermi).
constexpr int kLowestSm = 20;

}  // namespace

bool is_cubin(const ElfFile& file) { return file.machine() == kElfMachineCuda; }

CubinTarget cubin_target(const ElfFile& file) {
    CubinTarget result;
    int sm = 0;
    ArchVariant variant = ArchVariant::plain;
    switch (file.abi_version()) {
        case kAbiVersionV1:
            sm = static_cast<int>(file.flags() & 0xffu);
            if (file.flags() & kAcceleratorsV1) variant = ArchVariant::arch_specific;
            break;
        case kAbiVersionV2:
            sm = static_cast<int>((file.flags() >> 8) & 0xffu);
            break;
        default:
            result.problem = fmt::format("unknown CUDA ELF ABI version {}", file.abi_version());
            return result;
    }
    if (sm < kLowestSm) {
        result.problem = fmt::format("SM number {} is no architecture", sm);
        return result;
    }
    result.target = Target{CodeKind::sass, sm, variant};
    return result;
}

FatbinSummary single_target_summary(const Target& target) {
    FatbinSummary summary;
    summary.containers = 1;
    summary.entries = 1;
    summary.containers_with[target] = 1;
    summary.entries_with[target] = 1;
    summary.target_sets.push_back({{target}, 1});
    return summary;
}

}  // namespace provision::native
