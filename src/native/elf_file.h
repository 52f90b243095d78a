// A reader of 64-bit little-endian ELF files (shared libraries, Python
// extension modules) that answers a few questions without reading the whole
// file: where a section is, which dynamic symbols the file needs, and
// whether it exports a given symbol (through its GNU hash table).
//
// Every offset, size and count comes from a user-controlled file and is
// checked against the file's size before it is used: a malformed file gives a
// ReadError, never a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "native/byte_source.h"
#include "native/read_result.h"

namespace provision::native {

struct ElfSection {
    std::string name;
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
    const std::vector<ElfSection>& sections() const { return sections_; }
    // The first section called `name` (".nv_fatbin"), or nullptr.
    const ElfSection* section(std::string_view name) const;

    // The dynamic symbols the file needs from other libraries: undefined,
    // global or weak, in table order.  Reads the dynamic symbol and string
    // tables (small for an extension module).
    ReadResult<std::vector<DynamicSymbol>> undefined_dynamic_symbols() const;

    // Whether the file exports `name`: a defined global, weak or unique
    // dynamic symbol, found through the GNU hash table (bloom filter, bucket,
    // chain): a few small reads, never the whole symbol table.  A file
    // without a GNU hash table is an error (kind unsupported).  The bloom
    // filter and buckets are read once, at the first call (so an ElfFile is
    // not to be shared between threads).
    ReadResult<bool> exports_symbol(std::string_view name) const;

    // Where the dynamic linking tables are: from the section headers
    // (.dynsym, its string table, .gnu.hash), or when a file has none,
    // from the dynamic segment (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH).
    struct DynamicTables {
        std::uint64_t symbols_offset = 0;
        std::optional<std::uint64_t> symbol_count;  // unknown without section headers
        std::uint64_t strings_offset = 0;
        std::uint64_t strings_size = 0;
        std::optional<std::uint64_t> gnu_hash_offset;
    };
    const std::optional<DynamicTables>& dynamic_tables() const { return dynamic_; }

private:
    struct GnuHash {
        std::uint32_t bucket_count = 0;
        std::uint32_t symbol_offset = 0;
        std::uint32_t bloom_shift = 0;
        std::vector<std::uint64_t> bloom;
        std::vector<std::uint32_t> buckets;
        std::uint64_t chains_offset = 0;
    };

    explicit ElfFile(std::shared_ptr<const ByteSource> source) : source_(std::move(source)) {}
    ReadError malformed(std::string_view what) const;
    std::optional<ReadError> read_sections(std::uint64_t header_offset, std::uint16_t entry_size,
                                           std::uint64_t count, std::uint32_t names_index);
    std::optional<ReadError> find_dynamic_tables(std::uint64_t program_offset, std::uint16_t entry_size,
                                                 std::uint16_t count);
    ReadResult<const GnuHash*> gnu_hash() const;
    ReadResult<std::uint64_t> symbol_count() const;

    std::shared_ptr<const ByteSource> source_;
    std::vector<ElfSection> sections_;
    std::optional<DynamicTables> dynamic_;
    mutable std::optional<GnuHash> gnu_hash_;
};

// The GNU hash of a symbol name (the dl_new_hash function of glibc).
std::uint32_t gnu_symbol_hash(std::string_view name);

}  // namespace provision::native
