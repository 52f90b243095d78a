// The target architectures in a CUDA fatbinary (the `.nv_fatbin` section of
// an ELF file), read from its container and entry headers alone: payloads
// are skipped, never read or decompressed.  The layout, as read by the
// public decoders (n-eiling/cuda-fatbin-decompression, jiegec/fatbinary) and
// checked against cuobjdump --list-elf / --list-ptx: containers of a 16-byte
// header (magic 0xBA55ED50, version, header size, size of what follows),
// each holding entries whose header gives kind (1 PTX, 2 SASS), header and
// payload size, the architecture (90 for sm_90 and sm_90a) and flags
// (0x100000 arch-specific "a", 0x200000 family "f").
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "native/byte_source.h"
#include "native/elf_file.h"
#include "native/read_result.h"

namespace provision::native {

enum class CodeKind { sass, ptx };

enum class ArchVariant {
    plain,          // sm_90: this capability and newer minors of the same major
    arch_specific,  // sm_90a: exactly this capability
    family,         // sm_100f: this family (same major, this minor or newer)
};

// One compilation target: SASS for sm_XY[a|f], or PTX for compute_XY[a|f].
struct Target {
    CodeKind kind = CodeKind::sass;
    int arch = 0;  // major * 10 + minor, as the fatbinary stores it: 90, 100, 121
    ArchVariant variant = ArchVariant::plain;

    int major() const { return arch / 10; }
    int minor() const { return arch % 10; }
    // "sm_90a", "compute_120": cuobjdump's spelling.
    std::string str() const;
    // "9.0a", "12.0": the compute capability it was built for, as the report lists it.
    std::string capability_str() const;
    auto operator<=>(const Target&) const = default;
};

// A group of translation units (containers) that carry exactly the same
// targets.  A big library has a handful of these.
struct TargetSet {
    std::vector<Target> targets;  // sorted, without repeats
    std::size_t containers = 0;
};

struct FatbinSummary {
    std::size_t containers = 0;     // translation units
    std::size_t entries = 0;        // code objects, of every kind
    std::size_t other_entries = 0;  // neither SASS nor PTX (kinds this reader does not know)
    std::uint64_t skipped_bytes = 0;  // padding or garbage between containers
    // Containers carrying each target (a target twice in one container counts once).
    std::map<Target, std::size_t> containers_with;
    // Entries of each target: what `cuobjdump --list-elf` / `--list-ptx` print, one line each.
    std::map<Target, std::size_t> entries_with;
    std::vector<TargetSet> target_sets;
};

// Reads the fatbinary held in bytes [offset, offset + size) of `source`.
// A header that does not fit its container, or sizes that overflow, are
// errors (kind malformed); bytes between containers are skipped up to the
// next container magic at 8-byte alignment.  Linear in the section: reads
// go forward through a 512-byte window, so the bytes read stay within about
// twice the section's size (payloads are jumped over, never read); more
// than 2^20 containers, 2^22 entries or 4,096 different sets of targets are
// malformed.
ReadResult<FatbinSummary> read_fatbin(const ByteSource& source, std::uint64_t offset, std::uint64_t size);

// The `.nv_fatbin` section of an ELF file; a file without one has an empty
// summary (no containers).
ReadResult<FatbinSummary> read_fatbin(const ElfFile& file);

// Adds `more` to `total`, for packages that ship one module per architecture
// (SageAttention's _qattn_sm80, _qattn_sm89, _qattn_sm90): they count together.
void merge_into(FatbinSummary& total, const FatbinSummary& more);

}  // namespace provision::native
