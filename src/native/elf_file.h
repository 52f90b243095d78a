// A reader of 64-bit little-endian ELF files (shared libraries, Python
// extension modules) that answers a few questions without reading the whole
// file: where a section is, which dynamic symbols the file needs, and
// whether it exports a given symbol (through its GNU hash table).
//
// Every offset, size and count comes from a user-controlled file and is
// checked against the file's size before it is used: a malformed file gives a
// ReadError, never a crash.  The work and the memory are bounded too
// (docs/DESIGN.md, "Reading what the workload installed"): at most 65,536
// sections whose names are kept to 256 bytes each, a section name table of
// 16 MiB read once, hash tables of 16 MiB, 2^20 chain steps for all symbol
// lookups of a file together, and 65,536 undefined symbols with 16 MiB of
// names.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "native/byte_source.h"
#include "native/read_result.h"

namespace provision::native {

struct ElfSection {
    std::string name;           // at most kMaxSectionNameBytes; a longer name is cut (and matches no search)
    bool name_cut = false;
    std::uint32_t type = 0;     // SHT_*
    std::uint64_t address = 0;  // virtual address when loaded
    std::uint64_t offset = 0;   // in the file (not checked against its size: readers do that)
    std::uint64_t size = 0;
    std::uint32_t link = 0;
    std::uint64_t entry_size = 0;
};

struct DynamicSymbol {
    std::string name;   // as stored: mangled for C++
    bool weak = false;  // STB_WEAK: the loader tolerates its absence
};

class ElfFile {
public:
    // Opens a regular file (anything else is refused without blocking) and
    // reads its ELF header and section headers.
    static ReadResult<ElfFile> open(const std::string& path);
    static ReadResult<ElfFile> parse(std::shared_ptr<const ByteSource> source);

    const ByteSource& source() const { return *source_; }
    const std::string& path() const { return source_->name(); }
    // The header's e_machine (EM_CUDA for a cubin), e_flags and
    // e_ident[EI_ABIVERSION]: a cubin's target architecture is in them.
    std::uint16_t machine() const { return machine_; }
    std::uint32_t flags() const { return flags_; }
    std::uint8_t abi_version() const { return abi_version_; }
    const std::vector<ElfSection>& sections() const { return sections_; }
    // The first section called `name` (".nv_fatbin"), or nullptr.
    const ElfSection* section(std::string_view name) const;

    // The dynamic symbols the file needs from other libraries: undefined,
    // global or weak, in table order.  Reads the dynamic symbol and string
    // tables (small for an extension module).
    ReadResult<std::vector<DynamicSymbol>> undefined_dynamic_symbols() const;

    // Whether the file exports `name`: a defined global, weak or unique
    // dynamic symbol, found through the GNU hash table (bloom filter, bucket,
    // chain), else the SysV one (DT_HASH): a few small reads, never the whole
    // symbol table.  A file with neither is an error (kind unsupported).
    // The tables' heads are read once, at the first call (so an ElfFile is
    // not to be shared between threads).  All lookups of one file together
    // step through at most kMaxLookupSteps chain entries; a chain that never
    // ends, or one past that budget, is an error (kind malformed) that every
    // later lookup of the file answers at once.
    ReadResult<bool> exports_symbol(std::string_view name) const;

    // Chain entries stepped through by exports_symbol() so far: the work the
    // bound above caps, for tests to count.
    std::uint64_t lookup_steps() const { return lookup_steps_; }

    // Where the dynamic linking tables are: from the section headers
    // (.dynsym, its string table, .gnu.hash), or when a file has none,
    // from the dynamic segment (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH).
    struct DynamicTables {
        std::uint64_t symbols_offset = 0;
        std::optional<std::uint64_t> symbol_count;  // unknown without section headers
        std::uint64_t strings_offset = 0;
        std::uint64_t strings_size = 0;
        std::optional<std::uint64_t> gnu_hash_offset;
        std::optional<std::uint64_t> sysv_hash_offset;  // DT_HASH / SHT_HASH
    };
    const std::optional<DynamicTables>& dynamic_tables() const { return dynamic_; }

    // Where the loader looks for the libraries this file needs
    // (DT_NEEDED): its DT_RPATH and DT_RUNPATH strings, as written (ld.so
    // expands $ORIGIN; native/loader_folders.h follows its order).  Read
    // from the dynamic segment, else (a file without program headers) from
    // the SHT_DYNAMIC section; each string at most kMaxSearchPathBytes.
    struct LibrarySearchPaths {
        std::optional<std::string> rpath;
        std::optional<std::string> runpath;
    };
    ReadResult<LibrarySearchPaths> library_search_paths() const;

private:
    struct GnuHash {
        std::uint32_t bucket_count = 0;
        std::uint32_t symbol_offset = 0;
        std::uint32_t bloom_shift = 0;
        std::vector<std::uint64_t> bloom;
        std::vector<std::uint32_t> buckets;
        std::uint64_t chains_offset = 0;
    };
    struct SysvHash {
        std::uint32_t chain_count = 0;  // = the number of dynamic symbols
        std::vector<std::uint32_t> buckets;
        std::uint64_t chains_offset = 0;
    };

    explicit ElfFile(std::shared_ptr<const ByteSource> source) : source_(std::move(source)) {}
    ReadError malformed(std::string_view what) const;
    std::optional<ReadError> read_sections(std::uint64_t header_offset, std::uint16_t entry_size,
                                           std::uint64_t count, std::uint32_t names_index);
    std::optional<ReadError> find_dynamic_tables(std::uint64_t program_offset, std::uint16_t entry_size,
                                                 std::uint16_t count);
    std::optional<ReadError> find_search_paths(const std::map<std::int64_t, std::uint64_t>& segment_entries,
                                               std::optional<std::uint64_t> segment_strings);
    ReadResult<const GnuHash*> gnu_hash() const;
    ReadResult<const SysvHash*> sysv_hash() const;
    ReadResult<bool> gnu_lookup(const GnuHash& hash, std::string_view name) const;
    ReadResult<bool> sysv_lookup(const SysvHash& hash, std::string_view name) const;
    // Whether symbol `index` is `name`, defined and visible.
    ReadResult<bool> symbol_is(std::uint64_t index, std::string_view name) const;
    // One more chain step; false once the budget is spent.
    bool step() const { return ++lookup_steps_ <= kMaxLookupSteps; }
    ReadResult<std::uint64_t> symbol_count() const;

    std::shared_ptr<const ByteSource> source_;
    std::uint16_t machine_ = 0;
    std::uint32_t flags_ = 0;
    std::uint8_t abi_version_ = 0;
    std::vector<ElfSection> sections_;
    std::optional<DynamicTables> dynamic_;
    // DT_RPATH's and DT_RUNPATH's offsets in the dynamic string table, and that table.
    std::optional<std::uint64_t> rpath_offset_, runpath_offset_;
    std::uint64_t search_strings_offset_ = 0, search_strings_size_ = 0;
    mutable std::optional<GnuHash> gnu_hash_;
    mutable std::optional<SysvHash> sysv_hash_;
    mutable std::uint64_t lookup_steps_ = 0;
    mutable std::optional<ReadError> lookup_failure_;

public:
    static constexpr std::size_t kMaxSectionNameBytes = 256;
    static constexpr std::uint64_t kMaxLookupSteps = 1 << 20;
    // Real ones are a few hundred bytes (torch's lists a dozen wheels' folders).
    static constexpr std::uint64_t kMaxSearchPathBytes = 64 * 1024;
};

// The GNU hash of a symbol name (the dl_new_hash function of glibc).
std::uint32_t gnu_symbol_hash(std::string_view name);
// The SysV ELF hash of a symbol name (the gABI's elf_hash).
std::uint32_t sysv_symbol_hash(std::string_view name);

}  // namespace provision::native
