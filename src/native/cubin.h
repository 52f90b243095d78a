// The target of a cubin: a CUDA ELF file of one architecture's SASS, as
// FlashInfer's flashinfer-cubin wheel ships them (.cubin files loaded with
// cuModuleLoadData, outside any fatbinary).  Read from the ELF header alone.
//
// LLVM's llvm/BinaryFormat/ELF.h (EM_CUDA, ELFABIVERSION_CUDA_V1/V2,
// EF_CUDA_SM, EF_CUDA_SM_MASK, EF_CUDA_ACCELERATORS_V1) gives the layout:
// e_machine 190; with e_ident[EI_ABIVERSION] 7 the SM number (major * 10 +
// minor) is e_flags' low byte and bit 0x800 marks an arch-specific ("a")
// target; with ABI version 8 (sm_100 and newer, CUDA 12.8+) the SM number is
// in bits 8-15, and the "a" mark has been seen clear on cubins cuobjdump
// calls sm_100a: such a target is taken as plain SASS of its major version,
// which is what the family line (sm_100 code never runs on sm_120) needs.
#pragma once

#include <optional>
#include <string>

#include "native/elf_file.h"
#include "native/fatbin.h"

namespace provision::native {

constexpr std::uint16_t kElfMachineCuda = 190;

// Why a CUDA ELF file's target cannot be told, or nothing when it can.
struct CubinTarget {
    std::optional<Target> target;
    std::string problem;  // "unknown CUDA ELF ABI version 9", "SM number 3 is no architecture"
};

// Whether `file` is a cubin (e_machine EM_CUDA).
bool is_cubin(const ElfFile& file);

// The SASS target of a cubin.
CubinTarget cubin_target(const ElfFile& file);

// A summary of one translation unit carrying `target`: a cubin judged like a
// fatbinary container.
FatbinSummary single_target_summary(const Target& target);

}  // namespace provision::native
