// Small 64-bit little-endian ELF files made in memory, for the readers'
// tests: shared libraries with chosen dynamic symbols and hash tables, and
// the hostile shapes the readers must survive in bounded time and memory
// (a section name table without an end, a hash chain without an end, a
// fatbinary of empty containers).  Only what src/native reads is written:
// the ELF header and section headers, no program headers.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace synthetic_elf {

struct Section {
    std::string name;
    std::uint32_t type = SHT_PROGBITS;
    std::string bytes;
    std::uint32_t link = 0;  // a section index
    std::uint64_t entry_size = 0;
};

template <typename T>
void append(std::string& out, const T& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

inline void align(std::string& out, std::size_t to) {
    while (out.size() % to != 0) out += '\0';
}

// An ELF file holding `sections` (index 1 on; index 0 is the null section)
// and a section name table after them.
inline std::string build(const std::vector<Section>& sections, std::uint16_t type = ET_DYN) {
    std::string names(1, '\0');
    std::vector<std::uint32_t> name_offsets;
    for (const auto& section : sections) {
        name_offsets.push_back(static_cast<std::uint32_t>(names.size()));
        names += section.name;
        names += '\0';
    }
    const std::uint32_t names_name = static_cast<std::uint32_t>(names.size());
    names += ".shstrtab";
    names += '\0';

    std::string file(sizeof(Elf64_Ehdr), '\0');
    std::vector<Elf64_Shdr> headers(1);  // the null section
    for (std::size_t i = 0; i < sections.size(); ++i) {
        align(file, 8);
        Elf64_Shdr header{};
        header.sh_name = name_offsets[i];
        header.sh_type = sections[i].type;
        header.sh_offset = file.size();
        header.sh_size = sections[i].bytes.size();
        header.sh_link = sections[i].link;
        header.sh_entsize = sections[i].entry_size;
        header.sh_addralign = 8;
        file += sections[i].bytes;
        headers.push_back(header);
    }
    Elf64_Shdr names_header{};
    names_header.sh_name = names_name;
    names_header.sh_type = SHT_STRTAB;
    names_header.sh_offset = file.size();
    names_header.sh_size = names.size();
    file += names;
    headers.push_back(names_header);
    align(file, 8);

    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = ELFCLASS64;
    header.e_ident[EI_DATA] = ELFDATA2LSB;
    header.e_ident[EI_VERSION] = EV_CURRENT;
    header.e_type = type;
    header.e_machine = EM_X86_64;
    header.e_version = EV_CURRENT;
    header.e_ehsize = sizeof(Elf64_Ehdr);
    header.e_shentsize = sizeof(Elf64_Shdr);
    header.e_shoff = file.size();
    header.e_shnum = static_cast<std::uint16_t>(headers.size());
    header.e_shstrndx = static_cast<std::uint16_t>(headers.size() - 1);
    for (const auto& section_header : headers) append(file, section_header);
    std::memcpy(file.data(), &header, sizeof header);
    return file;
}

struct Symbol {
    std::string name;
    bool defined = true;  // else undefined (needed from another library)
};

// A dynamic symbol and string table of `symbols` (after the null symbol).
struct DynamicTables {
    std::string symbols;
    std::string strings;
};

inline DynamicTables dynamic_tables(const std::vector<Symbol>& symbols) {
    DynamicTables tables;
    tables.strings.assign(1, '\0');
    tables.symbols.assign(sizeof(Elf64_Sym), '\0');
    for (const auto& symbol : symbols) {
        Elf64_Sym entry{};
        entry.st_name = static_cast<std::uint32_t>(tables.strings.size());
        entry.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
        entry.st_shndx = symbol.defined ? 1 : SHN_UNDEF;  // any section but SHN_UNDEF defines it
        tables.strings += symbol.name;
        tables.strings += '\0';
        append(tables.symbols, entry);
    }
    return tables;
}

inline std::uint32_t gnu_hash(std::string_view name) {
    std::uint32_t h = 5381;
    for (const char c : name) h = h * 33 + static_cast<unsigned char>(c);
    return h;
}

// A GNU hash table with one bucket and an all-ones bloom filter over the
// symbols from index 1 on: every name passes the filter, and the chain
// holds `chain_entries` entries (one per symbol when 0), the last with the
// end bit unless `endless`.  Entries past the symbols hash to nothing a
// lookup asks for.
inline std::string gnu_hash_table(const std::vector<Symbol>& symbols, std::size_t chain_entries = 0,
                                  bool endless = false) {
    std::string table;
    append(table, std::uint32_t{1});   // buckets
    append(table, std::uint32_t{1});   // symbol offset
    append(table, std::uint32_t{1});   // bloom words
    append(table, std::uint32_t{6});   // bloom shift
    append(table, ~std::uint64_t{0});  // bloom: everything may be here
    append(table, std::uint32_t{symbols.empty() && chain_entries == 0 ? 0u : 1u});  // bucket 0 starts at symbol 1
    if (chain_entries == 0) chain_entries = symbols.size();
    for (std::size_t i = 0; i < chain_entries; ++i) {
        std::uint32_t value = i < symbols.size() ? gnu_hash(symbols[i].name) & ~1u : 0x2u;
        if (i + 1 == chain_entries && !endless) value |= 1;
        append(table, value);
    }
    return table;
}

// A shared library exporting (or needing) `symbols`, with a GNU hash table.
inline std::string shared_library(const std::vector<Symbol>& symbols, std::size_t chain_entries = 0,
                                  bool endless_chain = false) {
    const DynamicTables tables = dynamic_tables(symbols);
    return build({{".dynsym", SHT_DYNSYM, tables.symbols, 2, sizeof(Elf64_Sym)},
                  {".dynstr", SHT_STRTAB, tables.strings},
                  {".gnu.hash", SHT_GNU_HASH, gnu_hash_table(symbols, chain_entries, endless_chain), 1}});
}

// An extension module needing `names` from other libraries (no hash table:
// it exports nothing).
inline std::string extension_needing(const std::vector<std::string>& names) {
    std::vector<Symbol> symbols;
    for (const auto& name : names) symbols.push_back({name, false});
    const DynamicTables tables = dynamic_tables(symbols);
    return build({{".dynsym", SHT_DYNSYM, tables.symbols, 2, sizeof(Elf64_Sym)},
                  {".dynstr", SHT_STRTAB, tables.strings}});
}

// `count` empty fatbinary containers (16-byte headers, nothing after them).
inline std::string empty_fatbin_containers(std::size_t count) {
    std::string section;
    section.reserve(count * 16);
    for (std::size_t i = 0; i < count; ++i) {
        append(section, std::uint32_t{0xBA55ED50});
        append(section, std::uint16_t{1});
        append(section, std::uint16_t{16});
        append(section, std::uint64_t{0});
    }
    return section;
}

// A file with `count` sections (extended numbering past 0xff00) whose names
// all start at byte 0 of a `names_bytes` name table without a NUL.
inline std::string endless_section_names(std::uint32_t count, std::size_t names_bytes) {
    std::string file(sizeof(Elf64_Ehdr), '\0');
    const std::uint64_t names_offset = file.size();
    file.append(names_bytes, 'n');
    align(file, 8);
    const std::uint64_t headers_offset = file.size();
    for (std::uint32_t i = 0; i < count; ++i) {
        Elf64_Shdr header{};
        header.sh_name = 0;
        header.sh_type = i == 1 ? SHT_STRTAB : SHT_PROGBITS;
        if (i == 0) header.sh_size = count;  // the real count, past what e_shnum holds
        if (i == 1) {
            header.sh_offset = names_offset;
            header.sh_size = names_bytes;
        }
        append(file, header);
    }
    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = ELFCLASS64;
    header.e_ident[EI_DATA] = ELFDATA2LSB;
    header.e_ident[EI_VERSION] = EV_CURRENT;
    header.e_type = ET_DYN;
    header.e_machine = EM_X86_64;
    header.e_version = EV_CURRENT;
    header.e_ehsize = sizeof(Elf64_Ehdr);
    header.e_shentsize = sizeof(Elf64_Shdr);
    header.e_shoff = headers_offset;
    header.e_shnum = 0;      // extended numbering: section 0's sh_size holds the count
    header.e_shstrndx = 1;
    std::memcpy(file.data(), &header, sizeof header);
    return file;
}

// One SASS target of a fatbinary entry: the architecture as the fatbinary
// stores it (100 for sm_100 and sm_100a) and the variant flag (0x100000
// "a", 0x200000 "f").
struct FatbinTarget {
    std::uint32_t arch = 0;
    std::uint64_t variant_flags = 0;
};

inline constexpr std::uint64_t kArchSpecific = 0x100000;
inline constexpr std::uint64_t kFamily = 0x200000;

// A .nv_fatbin section of `units` containers, each holding one SASS entry
// (kind 2, a 0x40-byte header, 8 bytes of payload) per target.
inline std::string fatbin_section(const std::vector<FatbinTarget>& targets, std::size_t units = 1) {
    std::string entries;
    for (const auto& target : targets) {
        append(entries, std::uint16_t{2});       // kind: ELF (SASS)
        append(entries, std::uint16_t{0x0101});
        append(entries, std::uint32_t{0x40});    // header size
        append(entries, std::uint64_t{8});       // payload size
        append(entries, std::uint32_t{0});       // compressed size
        append(entries, std::uint32_t{0});       // options offset
        append(entries, std::uint16_t{8});       // minor
        append(entries, std::uint16_t{1});       // major
        append(entries, target.arch);
        append(entries, std::uint32_t{0});       // object name offset
        append(entries, std::uint32_t{0});       // object name length
        append(entries, std::uint64_t{0x11} | target.variant_flags);
        append(entries, std::uint64_t{0});
        append(entries, std::uint64_t{8});       // decompressed size
        entries.append(8, '\0');                 // payload
    }
    std::string section;
    for (std::size_t unit = 0; unit < units; ++unit) {
        append(section, std::uint32_t{0xBA55ED50});
        append(section, std::uint16_t{1});
        append(section, std::uint16_t{16});
        append(section, static_cast<std::uint64_t>(entries.size()));
        section += entries;
    }
    return section;
}

// A shared library whose .nv_fatbin carries `targets` in each of `units`
// translation units.
inline std::string library_with_device_code(const std::vector<FatbinTarget>& targets, std::size_t units = 1) {
    return build({{".nv_fatbin", SHT_PROGBITS, fatbin_section(targets, units)}});
}

// A cubin: an ELF header of machine EM_CUDA (190) whose e_flags name the
// target the way `abi_version` lays it out (7: the SM number in the low byte,
// 0x800 for "a"; 8: the SM number in bits 8-15), and no sections.
inline std::string cubin(std::uint32_t sm, std::uint8_t abi_version = 8, bool arch_specific = false) {
    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = ELFCLASS64;
    header.e_ident[EI_DATA] = ELFDATA2LSB;
    header.e_ident[EI_VERSION] = EV_CURRENT;
    header.e_ident[EI_OSABI] = 51;
    header.e_ident[EI_ABIVERSION] = abi_version;
    header.e_type = ET_EXEC;
    header.e_machine = 190;
    header.e_version = EV_CURRENT;
    header.e_ehsize = sizeof(Elf64_Ehdr);
    header.e_shentsize = sizeof(Elf64_Shdr);
    header.e_flags = abi_version == 7 ? (sm | 0x400u | (arch_specific ? 0x800u : 0u)) : (0x06000002u | (sm << 8));
    std::string file(sizeof header, '\0');
    std::memcpy(file.data(), &header, sizeof header);
    return file;
}

}  // namespace synthetic_elf
