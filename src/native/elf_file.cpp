#include "native/elf_file.h"

#include <elf.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace provision::native {

static_assert(std::endian::native == std::endian::little,
              "the ELF structures are copied as they are: a little-endian host reads little-endian files");

namespace {

// Bounds on what one file may make us hold in memory; real libraries stay
// far below them (libtorch_cpu.so: about 40 sections, a few MB of dynamic
// strings).
constexpr std::uint64_t max_sections = 1 << 16;
constexpr std::uint64_t max_section_names_bytes = 16ull << 20;
constexpr std::uint64_t max_table_bytes = 64ull << 20;
constexpr std::uint64_t max_hash_table_bytes = 16ull << 20;
constexpr std::uint64_t max_dynamic_entries = 1 << 16;
constexpr std::uint64_t max_undefined_symbols = 1 << 16;
constexpr std::uint64_t max_undefined_name_bytes = 16ull << 20;
constexpr std::uint64_t symbol_size = sizeof(Elf64_Sym);
// Real GNU hash chains hold a few symbols each; a longer walk means a chain
// without its end bit.
constexpr std::uint64_t max_chain_steps = 1 << 20;
// Chain entries read at a time while walking a GNU hash chain.
constexpr std::uint64_t chain_chunk_entries = 256;
// Symbols read at a time while listing the undefined ones.
constexpr std::uint64_t symbol_chunk = 4096;

template <typename T>
bool read_struct(const ByteSource& source, std::uint64_t offset, T& out) {
    return source.read_at(offset, &out, sizeof(T));
}

struct LoadSegment {
    std::uint64_t address, offset, size;
};

// The file offset of virtual address `address`, through the PT_LOAD segments.
std::optional<std::uint64_t> file_offset_of(const std::vector<LoadSegment>& loads, std::uint64_t address) {
    for (const LoadSegment& load : loads)
        if (address >= load.address && address - load.address < load.size) return load.offset + (address - load.address);
    return std::nullopt;
}

bool defined_and_visible(const Elf64_Sym& symbol) {
    const unsigned binding = ELF64_ST_BIND(symbol.st_info);
    return symbol.st_shndx != SHN_UNDEF &&
           (binding == STB_GLOBAL || binding == STB_WEAK || binding == STB_GNU_UNIQUE);
}

}  // namespace

std::uint32_t gnu_symbol_hash(std::string_view name) {
    std::uint32_t h = 5381;
    for (const char c : name) h = h * 33 + static_cast<unsigned char>(c);
    return h;
}

std::uint32_t sysv_symbol_hash(std::string_view name) {
    std::uint32_t h = 0;
    for (const char c : name) {
        h = (h << 4) + static_cast<unsigned char>(c);
        const std::uint32_t high = h & 0xf0000000u;
        if (high != 0) h ^= high >> 24;
        h &= ~high;
    }
    return h;
}

ReadError ElfFile::malformed(std::string_view what) const {
    return ReadError{ReadErrorKind::malformed, fmt::format("{}: malformed ELF file: {}", path(), what)};
}

ReadResult<ElfFile> ElfFile::open(const std::string& path) {
    auto source = FileSource::open(path);
    if (!source) return source.error();
    return parse(std::move(source.value()));
}

ReadResult<ElfFile> ElfFile::parse(std::shared_ptr<const ByteSource> source) {
    ElfFile file(std::move(source));
    const ByteSource& bytes = *file.source_;
    Elf64_Ehdr header{};
    if (bytes.size() < EI_NIDENT || !bytes.read_at(0, header.e_ident, EI_NIDENT) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
        return ReadError{ReadErrorKind::not_elf, fmt::format("{}: not an ELF file", file.path())};
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
        return ReadError{ReadErrorKind::unsupported,
                         fmt::format("{}: only 64-bit little-endian ELF files are read", file.path())};
    if (!read_struct(bytes, 0, header)) return file.malformed("the ELF header is truncated");
    file.machine_ = header.e_machine;
    file.flags_ = header.e_flags;
    file.abi_version_ = header.e_ident[EI_ABIVERSION];

    if (header.e_shoff != 0) {
        std::uint64_t count = header.e_shnum;
        std::uint32_t names_index = header.e_shstrndx;
        if (header.e_shentsize < sizeof(Elf64_Shdr)) return file.malformed("section header entries are too small");
        // More than 0xff00 sections: the real count and name table index
        // sit in section 0 (ELF gABI, "Extended section numbering").
        if (count == 0 || names_index == SHN_XINDEX) {
            Elf64_Shdr first{};
            if (!read_struct(bytes, header.e_shoff, first)) return file.malformed("section header 0 is out of bounds");
            if (count == 0) count = first.sh_size;
            if (names_index == SHN_XINDEX) names_index = first.sh_link;
        }
        if (auto error = file.read_sections(header.e_shoff, header.e_shentsize, count, names_index)) return *error;
    }
    if (header.e_phoff != 0 && header.e_phnum != 0) {
        if (header.e_phentsize < sizeof(Elf64_Phdr)) return file.malformed("program header entries are too small");
        if (auto error = file.find_dynamic_tables(header.e_phoff, header.e_phentsize, header.e_phnum)) return *error;
    } else if (auto error = file.find_dynamic_tables(0, 0, 0)) {
        return *error;
    }
    return file;
}

std::optional<ReadError> ElfFile::read_sections(std::uint64_t header_offset, std::uint16_t entry_size,
                                                std::uint64_t count, std::uint32_t names_index) {
    if (count > max_sections) return malformed(fmt::format("{} sections", count));
    if (!within(header_offset, count * entry_size, source_->size()))
        return malformed("the section headers lie outside the file");
    std::vector<Elf64_Shdr> headers(count);
    if (entry_size == sizeof(Elf64_Shdr)) {
        if (count > 0 && !source_->read_at(header_offset, headers.data(), count * sizeof(Elf64_Shdr)))
            return malformed("a section header cannot be read");
    } else {
        for (std::uint64_t i = 0; i < count; ++i)
            if (!read_struct(*source_, header_offset + i * entry_size, headers[i]))
                return malformed("a section header cannot be read");
    }

    std::string names;
    if (names_index != SHN_UNDEF && names_index < count) {
        const Elf64_Shdr& table = headers[names_index];
        if (table.sh_size > max_section_names_bytes) return malformed("the section name table is too large");
        if (!within(table.sh_offset, table.sh_size, source_->size()))
            return malformed("the section name table lies outside the file");
        names.resize(table.sh_size);
        if (!source_->read_at(table.sh_offset, names.data(), names.size()))
            return malformed("the section name table lies outside the file");
    }
    sections_.reserve(count);
    for (const Elf64_Shdr& h : headers) {
        ElfSection section;
        if (h.sh_name < names.size()) {
            // Never more than kMaxSectionNameBytes per section: 65,536 sections
            // all naming one 16 MiB string without an end must not copy it.
            const char* start = names.data() + h.sh_name;
            const std::size_t room = std::min<std::size_t>(names.size() - h.sh_name, kMaxSectionNameBytes + 1);
            const std::size_t length = strnlen(start, room);
            section.name_cut = length > kMaxSectionNameBytes;
            section.name.assign(start, std::min(length, kMaxSectionNameBytes));
        }
        section.type = h.sh_type;
        section.address = h.sh_addr;
        section.offset = h.sh_offset;
        section.size = h.sh_size;
        section.link = h.sh_link;
        section.entry_size = h.sh_entsize;
        sections_.push_back(std::move(section));
    }
    return std::nullopt;
}

std::optional<ReadError> ElfFile::find_dynamic_tables(std::uint64_t program_offset, std::uint16_t entry_size,
                                                      std::uint16_t count) {
    const std::uint64_t file_size = source_->size();
    // The dynamic segment's entries, and the load segments to translate the
    // addresses they hold.
    std::vector<LoadSegment> loads;
    std::map<std::int64_t, std::uint64_t> dynamic;  // first value of each tag
    for (std::uint16_t i = 0; i < count; ++i) {
        Elf64_Phdr h{};
        if (!read_struct(*source_, program_offset + std::uint64_t{i} * entry_size, h))
            return malformed("a program header lies outside the file");
        if (h.p_type == PT_LOAD) loads.push_back({h.p_vaddr, h.p_offset, h.p_filesz});
        if (h.p_type != PT_DYNAMIC || !dynamic.empty()) continue;
        const std::uint64_t entries = std::min<std::uint64_t>(h.p_filesz / sizeof(Elf64_Dyn), max_dynamic_entries);
        if (!within(h.p_offset, entries * sizeof(Elf64_Dyn), file_size))
            return malformed("the dynamic segment lies outside the file");
        std::vector<Elf64_Dyn> table(entries);
        if (entries > 0 && !source_->read_at(h.p_offset, table.data(), entries * sizeof(Elf64_Dyn)))
            return malformed("the dynamic segment cannot be read");
        for (const Elf64_Dyn& entry : table) {
            if (entry.d_tag == DT_NULL) break;
            dynamic.emplace(entry.d_tag, entry.d_un.d_val);
        }
    }
    auto dynamic_offset = [&](std::int64_t tag) -> std::optional<std::uint64_t> {
        const auto found = dynamic.find(tag);
        if (found == dynamic.end()) return std::nullopt;
        return file_offset_of(loads, found->second);
    };
    if (auto error = find_search_paths(dynamic, dynamic_offset(DT_STRTAB))) return error;

    DynamicTables tables;
    const auto symbols = std::find_if(sections_.begin(), sections_.end(),
                                      [](const ElfSection& s) { return s.type == SHT_DYNSYM; });
    if (symbols != sections_.end()) {
        if (symbols->entry_size != 0 && symbols->entry_size != symbol_size)
            return malformed("the dynamic symbol table's entries are not 24 bytes");
        if (!within(symbols->offset, symbols->size, file_size))
            return malformed("the dynamic symbol table lies outside the file");
        if (symbols->link >= sections_.size()) return malformed("the dynamic symbol table names no string table");
        const ElfSection& strings = sections_[symbols->link];
        tables.symbols_offset = symbols->offset;
        tables.symbol_count = symbols->size / symbol_size;
        tables.strings_offset = strings.offset;
        tables.strings_size = strings.size;
    } else {
        const auto symbol_table = dynamic_offset(DT_SYMTAB);
        const auto string_table = dynamic_offset(DT_STRTAB);
        if (!symbol_table || !string_table) return std::nullopt;  // not a dynamically linked file
        if (dynamic.contains(DT_SYMENT) && dynamic[DT_SYMENT] != symbol_size)
            return malformed("DT_SYMENT is not 24 bytes");
        tables.symbols_offset = *symbol_table;
        tables.strings_offset = *string_table;
        tables.strings_size = dynamic.contains(DT_STRSZ) ? dynamic[DT_STRSZ] : 0;
    }
    if (!within(tables.strings_offset, tables.strings_size, file_size))
        return malformed("the dynamic string table lies outside the file");
    const auto hash = std::find_if(sections_.begin(), sections_.end(),
                                   [](const ElfSection& s) { return s.type == SHT_GNU_HASH; });
    if (hash != sections_.end()) tables.gnu_hash_offset = hash->offset;
    else tables.gnu_hash_offset = dynamic_offset(DT_GNU_HASH);
    const auto sysv = std::find_if(sections_.begin(), sections_.end(),
                                   [](const ElfSection& s) { return s.type == SHT_HASH; });
    if (sysv != sections_.end()) tables.sysv_hash_offset = sysv->offset;
    else tables.sysv_hash_offset = dynamic_offset(DT_HASH);
    dynamic_ = tables;
    return std::nullopt;
}

std::optional<ReadError> ElfFile::find_search_paths(const std::map<std::int64_t, std::uint64_t>& segment_entries,
                                                    std::optional<std::uint64_t> segment_strings) {
    const std::map<std::int64_t, std::uint64_t>* entries = &segment_entries;
    std::map<std::int64_t, std::uint64_t> section_entries;
    if (segment_entries.empty()) {
        // No dynamic segment: the SHT_DYNAMIC section, its strings in the section it links.
        const auto dynamic = std::find_if(sections_.begin(), sections_.end(),
                                          [](const ElfSection& s) { return s.type == SHT_DYNAMIC; });
        if (dynamic == sections_.end()) return std::nullopt;
        const std::uint64_t count = std::min<std::uint64_t>(dynamic->size / sizeof(Elf64_Dyn), max_dynamic_entries);
        if (!within(dynamic->offset, count * sizeof(Elf64_Dyn), source_->size()))
            return malformed("the dynamic section lies outside the file");
        std::vector<Elf64_Dyn> table(count);
        if (count > 0 && !source_->read_at(dynamic->offset, table.data(), count * sizeof(Elf64_Dyn)))
            return malformed("the dynamic section cannot be read");
        for (const Elf64_Dyn& entry : table) {
            if (entry.d_tag == DT_NULL) break;
            section_entries.emplace(entry.d_tag, entry.d_un.d_val);
        }
        if (dynamic->link >= sections_.size()) return malformed("the dynamic section names no string table");
        search_strings_offset_ = sections_[dynamic->link].offset;
        search_strings_size_ = sections_[dynamic->link].size;
        entries = &section_entries;
    } else if (segment_strings) {
        search_strings_offset_ = *segment_strings;
        const auto size = segment_entries.find(DT_STRSZ);
        search_strings_size_ = size == segment_entries.end() ? 0 : size->second;
    }
    if (const auto rpath = entries->find(DT_RPATH); rpath != entries->end()) rpath_offset_ = rpath->second;
    if (const auto runpath = entries->find(DT_RUNPATH); runpath != entries->end()) runpath_offset_ = runpath->second;
    return std::nullopt;
}

ReadResult<ElfFile::LibrarySearchPaths> ElfFile::library_search_paths() const {
    LibrarySearchPaths paths;
    const auto read = [&](std::optional<std::uint64_t> offset, const char* tag,
                          std::optional<std::string>& out) -> std::optional<ReadError> {
        if (!offset) return std::nullopt;
        if (*offset >= search_strings_size_ || !within(search_strings_offset_, search_strings_size_, source_->size()))
            return malformed(fmt::format("{} lies outside the dynamic string table", tag));
        std::string text(std::min<std::uint64_t>(search_strings_size_ - *offset, kMaxSearchPathBytes + 1), '\0');
        if (!source_->read_at(search_strings_offset_ + *offset, text.data(), text.size()))
            return malformed(fmt::format("{} cannot be read", tag));
        const std::size_t length = strnlen(text.data(), text.size());
        if (length == text.size())
            return malformed(fmt::format("{} has no end within {} bytes", tag, kMaxSearchPathBytes));
        text.resize(length);
        out = std::move(text);
        return std::nullopt;
    };
    if (auto error = read(rpath_offset_, "DT_RPATH", paths.rpath)) return *error;
    if (auto error = read(runpath_offset_, "DT_RUNPATH", paths.runpath)) return *error;
    return paths;
}

const ElfSection* ElfFile::section(std::string_view name) const {
    for (const ElfSection& s : sections_)
        if (!s.name_cut && s.name == name) return &s;
    return nullptr;
}

ReadResult<const ElfFile::GnuHash*> ElfFile::gnu_hash() const {
    if (gnu_hash_) return &*gnu_hash_;
    if (!dynamic_) return ReadError{ReadErrorKind::unsupported, fmt::format("{}: no dynamic symbol table", path())};
    if (!dynamic_->gnu_hash_offset)
        return ReadError{ReadErrorKind::unsupported, fmt::format("{}: no GNU hash table", path())};
    const std::uint64_t offset = *dynamic_->gnu_hash_offset;
    std::uint32_t header[4];
    if (!source_->read_at(offset, header, sizeof header)) return malformed("the GNU hash table lies outside the file");
    GnuHash hash;
    hash.bucket_count = header[0];
    hash.symbol_offset = header[1];
    hash.bloom_shift = header[3];
    const std::uint64_t bloom_bytes = std::uint64_t{header[2]} * 8;
    const std::uint64_t bucket_bytes = std::uint64_t{hash.bucket_count} * 4;
    if (bloom_bytes + bucket_bytes > max_hash_table_bytes) return malformed("the GNU hash table is too large");
    if (!within(offset + 16, bloom_bytes + bucket_bytes, source_->size()))
        return malformed("the GNU hash table lies outside the file");
    hash.bloom.resize(header[2]);
    hash.buckets.resize(hash.bucket_count);
    if (!source_->read_at(offset + 16, hash.bloom.data(), bloom_bytes) ||
        !source_->read_at(offset + 16 + bloom_bytes, hash.buckets.data(), bucket_bytes))
        return malformed("the GNU hash table lies outside the file");
    hash.chains_offset = offset + 16 + bloom_bytes + bucket_bytes;
    gnu_hash_ = std::move(hash);
    return &*gnu_hash_;
}

ReadResult<const ElfFile::SysvHash*> ElfFile::sysv_hash() const {
    if (sysv_hash_) return &*sysv_hash_;
    if (!dynamic_ || !dynamic_->sysv_hash_offset)
        return ReadError{ReadErrorKind::unsupported, fmt::format("{}: no GNU or SysV hash table", path())};
    const std::uint64_t offset = *dynamic_->sysv_hash_offset;
    std::uint32_t header[2];
    if (!source_->read_at(offset, header, sizeof header)) return malformed("the SysV hash table lies outside the file");
    SysvHash hash;
    hash.chain_count = header[1];
    const std::uint64_t bucket_bytes = std::uint64_t{header[0]} * 4;
    if (bucket_bytes > max_hash_table_bytes) return malformed("the SysV hash table is too large");
    if (!within(offset + 8, bucket_bytes + std::uint64_t{hash.chain_count} * 4, source_->size()))
        return malformed("the SysV hash table lies outside the file");
    hash.buckets.resize(header[0]);
    if (bucket_bytes > 0 && !source_->read_at(offset + 8, hash.buckets.data(), bucket_bytes))
        return malformed("the SysV hash table lies outside the file");
    hash.chains_offset = offset + 8 + bucket_bytes;
    sysv_hash_ = std::move(hash);
    return &*sysv_hash_;
}

ReadResult<bool> ElfFile::symbol_is(std::uint64_t index, std::string_view name) const {
    if (dynamic_->symbol_count && index >= *dynamic_->symbol_count)
        return malformed("a hash chain names a symbol past the end of the table");
    Elf64_Sym symbol{};
    if (!read_struct(*source_, dynamic_->symbols_offset + index * symbol_size, symbol))
        return malformed("a dynamic symbol lies outside the file");
    if (!defined_and_visible(symbol) || !within(symbol.st_name, name.size() + 1, dynamic_->strings_size)) return false;
    // Compare the stored name, its terminating NUL included.
    std::string stored(name.size() + 1, '\0');
    if (!source_->read_at(dynamic_->strings_offset + symbol.st_name, stored.data(), stored.size())) return false;
    return stored.back() == '\0' && std::string_view(stored.data(), name.size()) == name;
}

ReadResult<bool> ElfFile::exports_symbol(std::string_view name) const {
    if (lookup_failure_) return *lookup_failure_;
    ReadResult<bool> answer = false;
    if (auto gnu = gnu_hash()) {
        answer = gnu_lookup(*gnu.value(), name);
    } else if (gnu.error().kind != ReadErrorKind::unsupported) {
        answer = gnu.error();
    } else if (auto sysv = sysv_hash()) {
        answer = sysv_lookup(*sysv.value(), name);
    } else {
        answer = sysv.error();
    }
    // A table that proved broken answers every later lookup the same, at once.
    if (!answer && answer.error().kind == ReadErrorKind::malformed) lookup_failure_ = answer.error();
    return answer;
}

ReadResult<bool> ElfFile::gnu_lookup(const GnuHash& hash, std::string_view name) const {
    if (hash.bucket_count == 0 || hash.bloom.empty()) return false;
    const std::uint32_t h = gnu_symbol_hash(name);
    // Bloom filter: two bits per symbol in one 64-bit word; both unset bits
    // mean "not here" without touching the buckets.
    const std::uint64_t word = hash.bloom[(h / 64) % hash.bloom.size()];
    const std::uint64_t mask = (std::uint64_t{1} << (h % 64)) | (std::uint64_t{1} << ((h >> (hash.bloom_shift % 32)) % 64));
    if ((word & mask) != mask) return false;

    std::uint64_t index = hash.buckets[h % hash.bucket_count];
    if (index == 0 || index < hash.symbol_offset) return false;
    // The chain of hashes runs in step with the symbols from symbol_offset
    // on; its last entry has the low bit set.  Read a chunk at a time.
    std::uint32_t chunk[chain_chunk_entries];
    std::uint64_t chunk_first = 0, chunk_size = 0;
    for (;; ++index) {
        if (!step()) return malformed(fmt::format("hash chains longer than {} steps in all", kMaxLookupSteps));
        const std::uint64_t slot = index - hash.symbol_offset;
        if (slot < chunk_first || slot >= chunk_first + chunk_size) {
            const std::uint64_t at = hash.chains_offset + slot * 4;
            if (at >= source_->size()) return malformed("a GNU hash chain runs outside the file");
            chunk_size = std::min<std::uint64_t>(chain_chunk_entries, (source_->size() - at) / 4);
            chunk_first = slot;
            if (chunk_size == 0 || !source_->read_at(at, chunk, chunk_size * 4))
                return malformed("a GNU hash chain runs outside the file");
        }
        const std::uint32_t chain = chunk[slot - chunk_first];
        if ((chain | 1) == (h | 1)) {
            auto match = symbol_is(index, name);
            if (!match || *match) return match;
        }
        if (chain & 1) return false;
    }
}

ReadResult<bool> ElfFile::sysv_lookup(const SysvHash& hash, std::string_view name) const {
    if (hash.buckets.empty()) return false;
    std::uint64_t index = hash.buckets[sysv_symbol_hash(name) % hash.buckets.size()];
    while (index != STN_UNDEF) {
        if (!step()) return malformed(fmt::format("hash chains longer than {} steps in all", kMaxLookupSteps));
        if (index >= hash.chain_count) return malformed("a SysV hash chain names a symbol past the end of the table");
        auto match = symbol_is(index, name);
        if (!match || *match) return match;
        std::uint32_t next = 0;
        if (!source_->read_at(hash.chains_offset + index * 4, &next, 4))
            return malformed("a SysV hash chain runs outside the file");
        index = next;
    }
    return false;
}

ReadResult<std::uint64_t> ElfFile::symbol_count() const {
    if (dynamic_->symbol_count) return *dynamic_->symbol_count;
    // Without section headers: a SysV hash table holds the count; else one
    // past the last symbol any GNU hash chain reaches (undefined symbols come
    // before the hashed ones).
    auto loaded = gnu_hash();
    if (!loaded) {
        if (loaded.error().kind != ReadErrorKind::unsupported) return loaded.error();
        auto sysv = sysv_hash();
        if (!sysv) return sysv.error();
        return std::uint64_t{sysv.value()->chain_count};
    }
    const GnuHash& hash = *loaded.value();
    std::uint64_t last = 0;
    for (const std::uint32_t start : hash.buckets) last = std::max<std::uint64_t>(last, start);
    if (last < hash.symbol_offset) return std::uint64_t{hash.symbol_offset};
    std::uint32_t chunk[chain_chunk_entries];
    for (std::uint64_t steps = 0; steps < max_chain_steps;) {
        const std::uint64_t at = hash.chains_offset + (last - hash.symbol_offset) * 4;
        const std::uint64_t entries =
            at < source_->size() ? std::min<std::uint64_t>(chain_chunk_entries, (source_->size() - at) / 4) : 0;
        if (entries == 0 || !source_->read_at(at, chunk, entries * 4))
            return malformed("a GNU hash chain runs outside the file");
        for (std::uint64_t i = 0; i < entries && steps < max_chain_steps; ++i, ++steps, ++last)
            if (chunk[i] & 1) return last + 1;
    }
    return malformed("a GNU hash chain never ends");
}

ReadResult<std::vector<DynamicSymbol>> ElfFile::undefined_dynamic_symbols() const {
    if (!dynamic_) return std::vector<DynamicSymbol>{};  // a static file needs nothing
    auto count = symbol_count();
    if (!count) return count.error();
    if (*count > max_table_bytes / symbol_size || dynamic_->strings_size > max_table_bytes)
        return malformed("the dynamic symbol table is too large");
    if (!within(dynamic_->symbols_offset, *count * symbol_size, source_->size()) ||
        !within(dynamic_->strings_offset, dynamic_->strings_size, source_->size()))
        return malformed("the dynamic symbol table lies outside the file");
    std::string strings(dynamic_->strings_size, '\0');
    if (!source_->read_at(dynamic_->strings_offset, strings.data(), strings.size()))
        return malformed("the dynamic string table lies outside the file");

    // The symbols a chunk at a time; the names kept are bounded in number
    // and in bytes, and no name is scanned past what is left of that budget.
    std::vector<DynamicSymbol> undefined;
    std::uint64_t name_bytes = 0;
    std::vector<Elf64_Sym> symbols;
    for (std::uint64_t first = 1; first < *count; first += symbols.size()) {  // symbol 0 is the null symbol
        symbols.resize(std::min<std::uint64_t>(symbol_chunk, *count - first));
        if (!source_->read_at(dynamic_->symbols_offset + first * symbol_size, symbols.data(),
                              symbols.size() * symbol_size))
            return malformed("the dynamic symbol table lies outside the file");
        for (const Elf64_Sym& symbol : symbols) {
            const unsigned binding = ELF64_ST_BIND(symbol.st_info);
            if (symbol.st_shndx != SHN_UNDEF || (binding != STB_GLOBAL && binding != STB_WEAK)) continue;
            if (symbol.st_name >= strings.size()) return malformed("a symbol name lies outside the string table");
            const char* start = strings.data() + symbol.st_name;
            const std::size_t room = strings.size() - symbol.st_name;
            const std::size_t budget = max_undefined_name_bytes - name_bytes;
            const std::size_t length = strnlen(start, std::min(room, budget + 1));
            if (length > budget)
                return malformed(fmt::format("the undefined symbols' names exceed {} bytes", max_undefined_name_bytes));
            if (length == room) return malformed("a symbol name has no end");
            if (length == 0) continue;
            if (undefined.size() == max_undefined_symbols)
                return malformed(fmt::format("more than {} undefined symbols", max_undefined_symbols));
            name_bytes += length;
            undefined.push_back({std::string(start, length), binding == STB_WEAK});
        }
    }
    return undefined;
}

}  // namespace provision::native
