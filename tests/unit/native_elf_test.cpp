// The ELF reader on small shared libraries built from tests/native/ and on
// malformed copies of them.
#include <elf.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "native/demangle.h"
#include "native/elf_file.h"
#include "native_test_data.h"

using namespace provision::native;
using native_test::data_path;
using native_test::in_memory;
using native_test::poke;

namespace {

const std::string set_device = "_ZN3c104cuda9SetDeviceEi";       // c10::cuda::SetDevice(int)
const std::string exchange_device = "_ZN3c104cuda14ExchangeDeviceEi";  // c10::cuda::ExchangeDevice(int)

std::vector<std::string> undefined_names(const ElfFile& file) {
    auto symbols = file.undefined_dynamic_symbols();
    REQUIRE(symbols.ok());
    std::vector<std::string> names;
    for (const auto& s : *symbols) names.push_back(s.name);
    return names;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_CASE("an ELF file's sections and dynamic tables are found", "[native][elf]") {
    auto file = ElfFile::open(data_path("torch/lib/libc10.so"));
    REQUIRE(file.ok());
    CHECK(file->section(".dynsym") != nullptr);
    CHECK(file->section(".gnu.hash") != nullptr);
    CHECK(file->section(".text") != nullptr);
    CHECK(file->section(".nv_fatbin") == nullptr);
    REQUIRE(file->dynamic_tables().has_value());
    CHECK(file->dynamic_tables()->gnu_hash_offset.has_value());
}

TEST_CASE("exported symbols are answered through the GNU hash table", "[native][elf]") {
    auto file = ElfFile::open(data_path("torch/lib/libc10.so"));
    REQUIRE(file.ok());
    CHECK(*file->exports_symbol(set_device));
    CHECK(*file->exports_symbol("_ZN3c104cuda12device_countEv"));
    CHECK(*file->exports_symbol("c10_plain_c_function"));
    CHECK(*file->exports_symbol("_ZN3c109weak_hookEv"));  // weak definitions count
    CHECK_FALSE(*file->exports_symbol(exchange_device));
    CHECK_FALSE(*file->exports_symbol("_ZN3c1013hidden_helperEv"));  // hidden: not in the dynamic table
    CHECK_FALSE(*file->exports_symbol("c10_plain_c_functio"));
    CHECK_FALSE(*file->exports_symbol(""));
    // The library's own undefined symbols are needed, not exported.
    auto needed = file->undefined_dynamic_symbols();
    REQUIRE(needed.ok());
    for (const auto& s : *needed) CHECK_FALSE(*file->exports_symbol(s.name));
}

TEST_CASE("an extension's undefined symbols are listed", "[native][elf]") {
    auto ok = ElfFile::open(data_path("extensions/extension_ok.so"));
    auto missing = ElfFile::open(data_path("extensions/extension_missing.so"));
    REQUIRE(ok.ok());
    REQUIRE(missing.ok());
    const auto ok_names = undefined_names(*ok);
    const auto missing_names = undefined_names(*missing);
    CHECK(contains(ok_names, set_device));
    CHECK_FALSE(contains(ok_names, exchange_device));
    CHECK(contains(missing_names, set_device));
    CHECK(contains(missing_names, exchange_device));
    CHECK_FALSE(contains(ok_names, "extension_entry"));  // defined here

    auto symbols = ok->undefined_dynamic_symbols();
    const auto hook = std::find_if(symbols->begin(), symbols->end(),
                                   [](const DynamicSymbol& s) { return s.name == "_Z13optional_hookv"; });
    REQUIRE(hook != symbols->end());
    CHECK(hook->weak);

    // What the torch check does: every c10 symbol the extension needs, looked up in libc10.
    auto c10 = ElfFile::open(data_path("torch/lib/libc10.so"));
    std::vector<std::string> absent;
    for (const auto& name : missing_names)
        if (name.starts_with("_ZN3c10") && !*c10->exports_symbol(name)) absent.push_back(demangle(name));
    CHECK(absent == std::vector<std::string>{"c10::cuda::ExchangeDevice(int)"});
}

TEST_CASE("a file with only a SysV hash table answers exports through it", "[native][elf]") {
    auto file = ElfFile::open(data_path("sysv/libc10_sysv_hash.so"));
    REQUIRE(file.ok());
    CHECK_FALSE(file->dynamic_tables()->gnu_hash_offset.has_value());
    CHECK(file->dynamic_tables()->sysv_hash_offset.has_value());
    CHECK(*file->exports_symbol(set_device));
    CHECK(*file->exports_symbol("c10_plain_c_function"));
    CHECK(*file->exports_symbol("_ZN3c109weak_hookEv"));
    CHECK_FALSE(*file->exports_symbol(exchange_device));
    CHECK_FALSE(*file->exports_symbol("_ZN3c1013hidden_helperEv"));
    CHECK_FALSE(*file->exports_symbol(""));
    CHECK(file->undefined_dynamic_symbols().ok());  // the symbol table itself is read

    // Neither table: the file cannot answer.
    std::string bytes = test_support::read_file(data_path("sysv/libc10_sysv_hash.so"));
    const auto* hash = file->section(".hash");
    REQUIRE(hash != nullptr);
    Elf64_Ehdr header;
    std::memcpy(&header, bytes.data(), sizeof header);
    for (std::size_t i = 0; i < file->sections().size(); ++i)
        if (file->sections()[i].type == SHT_HASH)
            poke<std::uint32_t>(bytes, header.e_shoff + i * header.e_shentsize + offsetof(Elf64_Shdr, sh_type),
                                SHT_PROGBITS);
    // The dynamic segment's DT_HASH too.
    auto without = ElfFile::parse(in_memory(bytes));
    REQUIRE(without.ok());
    if (without->dynamic_tables()->sysv_hash_offset) {
        const auto* dynamic = without->section(".dynamic");
        REQUIRE(dynamic != nullptr);
        for (std::uint64_t at = dynamic->offset; at + sizeof(Elf64_Dyn) <= dynamic->offset + dynamic->size;
             at += sizeof(Elf64_Dyn)) {
            Elf64_Dyn entry;
            std::memcpy(&entry, bytes.data() + at, sizeof entry);
            if (entry.d_tag == DT_HASH) poke<std::int64_t>(bytes, at, DT_DEBUG);
        }
        without = ElfFile::parse(in_memory(bytes));
        REQUIRE(without.ok());
    }
    auto answer = without->exports_symbol(set_device);
    REQUIRE_FALSE(answer.ok());
    CHECK(answer.error().kind == ReadErrorKind::unsupported);
    CHECK_THAT(answer.error().message, Catch::Contains("no GNU or SysV hash table"));
}

TEST_CASE("without section headers the dynamic segment leads to the tables", "[native][elf]") {
    std::string bytes = test_support::read_file(data_path("extensions/extension_missing.so"));
    REQUIRE(bytes.size() > sizeof(Elf64_Ehdr));
    poke<std::uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), 0);
    poke<std::uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shnum), 0);
    poke<std::uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shstrndx), 0);
    auto file = ElfFile::parse(in_memory(bytes));
    REQUIRE(file.ok());
    CHECK(file->sections().empty());
    REQUIRE(file->dynamic_tables().has_value());
    CHECK_FALSE(file->dynamic_tables()->symbol_count.has_value());
    const auto names = undefined_names(*file);
    CHECK(contains(names, set_device));
    CHECK(contains(names, exchange_device));
    CHECK(*file->exports_symbol("extension_entry"));
    CHECK_FALSE(*file->exports_symbol(set_device));
}

TEST_CASE("C++ names are demangled for messages", "[native][elf]") {
    CHECK(demangle("_ZN3c104cuda9SetDeviceEi") == "c10::cuda::SetDevice(int)");
    CHECK(demangle("_ZN2at6TensorC1Ev") == "at::Tensor::Tensor()");
    CHECK(demangle("cudaMalloc") == "cudaMalloc");  // C names stay
    CHECK(demangle("_Z") == "_Z");                  // refused by the demangler: as it is
    CHECK(demangle("_ZN3c10") == "_ZN3c10");
    CHECK(demangle("") == "");
}

TEST_CASE("files that are not regular are refused without blocking", "[native][elf]") {
    test_support::TempDir dir;
    const std::string fifo = dir.file("pipe.so");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto start = std::chrono::steady_clock::now();
    auto file = ElfFile::open(fifo);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));  // refused, not blocked on a writer
    REQUIRE_FALSE(file.ok());
    CHECK(file.error().kind == ReadErrorKind::not_regular_file);

    for (const std::string& path : {dir.path(), std::string("/dev/zero"), std::string("/dev/null")}) {
        INFO(path);
        auto other = ElfFile::open(path);
        REQUIRE_FALSE(other.ok());
        CHECK(other.error().kind == ReadErrorKind::not_regular_file);
    }
    auto none = ElfFile::open(dir.file("absent.so"));
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().kind == ReadErrorKind::cannot_open);
    CHECK_THAT(none.error().message, Catch::Contains("absent.so"));
}

TEST_CASE("files that are not 64-bit little-endian ELF are refused", "[native][elf]") {
    test_support::TempDir dir;
    test_support::write_file(dir.file("empty.so"), "");
    test_support::write_file(dir.file("text.so"), "INPUT(-lc10)\n");
    CHECK(ElfFile::open(dir.file("empty.so")).error().kind == ReadErrorKind::not_elf);
    CHECK(ElfFile::open(dir.file("text.so")).error().kind == ReadErrorKind::not_elf);

    std::string bytes = test_support::read_file(data_path("torch/lib/libc10.so"));
    std::string elf32 = bytes;
    elf32[EI_CLASS] = ELFCLASS32;
    CHECK(ElfFile::parse(in_memory(elf32)).error().kind == ReadErrorKind::unsupported);
    std::string big_endian = bytes;
    big_endian[EI_DATA] = ELFDATA2MSB;
    CHECK(ElfFile::parse(in_memory(big_endian)).error().kind == ReadErrorKind::unsupported);
}

TEST_CASE("truncated ELF files give errors, never a crash", "[native][elf][malformed]") {
    const std::string bytes = test_support::read_file(data_path("extensions/extension_missing.so"));
    REQUIRE(bytes.size() > 4096);
    std::size_t refused = 0;
    for (std::size_t length = 0; length < bytes.size(); length += length < 128 ? 1 : 61) {
        INFO("first " << length << " bytes");
        auto file = ElfFile::parse(in_memory(bytes.substr(0, length)));
        if (!file) {
            ++refused;
            CHECK_FALSE(file.error().message.empty());
            continue;
        }
        // Whatever parsed must answer, with a value or an error.
        (void)file->undefined_dynamic_symbols();
        (void)file->exports_symbol(set_device);
    }
    CHECK(refused > 0);
    // The section headers sit at the end: cut them off and the file is refused.
    CHECK_FALSE(ElfFile::parse(in_memory(bytes.substr(0, bytes.size() - 1))).ok());
}

TEST_CASE("huge offsets, sizes and counts in headers give errors", "[native][elf][malformed]") {
    const std::string original = test_support::read_file(data_path("torch/lib/libc10.so"));
    Elf64_Ehdr header;
    std::memcpy(&header, original.data(), sizeof header);
    auto refused = [](const std::string& bytes) {
        auto file = ElfFile::parse(in_memory(bytes));
        if (!file) return file.error().kind == ReadErrorKind::malformed;
        auto exports = file->exports_symbol(set_device);
        auto needed = file->undefined_dynamic_symbols();
        return (!exports && exports.error().kind == ReadErrorKind::malformed) ||
               (!needed && needed.error().kind == ReadErrorKind::malformed);
    };
    SECTION("section header table beyond the end") {
        std::string bytes = original;
        poke<std::uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), ~std::uint64_t{0} - 8);
        CHECK(refused(bytes));
    }
    SECTION("too many sections") {
        std::string bytes = original;
        poke<std::uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shnum), 0xfff0);
        CHECK(refused(bytes));
    }
    SECTION("section headers too small") {
        std::string bytes = original;
        poke<std::uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shentsize), 8);
        CHECK(refused(bytes));
    }
    SECTION("program headers beyond the end") {
        std::string bytes = original;
        poke<std::uint64_t>(bytes, offsetof(Elf64_Ehdr, e_phoff), std::uint64_t{1} << 62);
        CHECK(refused(bytes));
    }
    auto section_header = [&](const char* name) {
        auto file = ElfFile::parse(in_memory(original));
        REQUIRE(file.ok());
        for (std::size_t i = 0; i < file->sections().size(); ++i)
            if (file->sections()[i].name == name) return header.e_shoff + i * header.e_shentsize;
        FAIL("no section " << name);
        return std::uint64_t{0};
    };
    SECTION("dynamic symbol table larger than the file") {
        std::string bytes = original;
        poke<std::uint64_t>(bytes, section_header(".dynsym") + offsetof(Elf64_Shdr, sh_size), std::uint64_t{1} << 40);
        CHECK(refused(bytes));
    }
    SECTION("GNU hash table with a huge bloom filter") {
        std::string bytes = original;
        auto file = ElfFile::parse(in_memory(original));
        const std::uint64_t hash = file->section(".gnu.hash")->offset;
        poke<std::uint32_t>(bytes, hash + 8, 0xffffffffu);
        CHECK(refused(bytes));
    }
    SECTION("GNU hash table with huge bucket entries") {
        std::string bytes = original;
        auto file = ElfFile::parse(in_memory(original));
        const std::uint64_t hash = file->section(".gnu.hash")->offset;
        std::uint32_t buckets = 0, bloom = 0;
        std::memcpy(&buckets, original.data() + hash, 4);
        std::memcpy(&bloom, original.data() + hash + 8, 4);
        // Every bloom bit set and every bucket pointing far away.
        for (std::uint32_t i = 0; i < bloom; ++i) poke<std::uint64_t>(bytes, hash + 16 + 8 * i, ~std::uint64_t{0});
        for (std::uint32_t i = 0; i < buckets; ++i) poke<std::uint32_t>(bytes, hash + 16 + 8 * bloom + 4 * i, 0xfffffff0u);
        CHECK(refused(bytes));
    }
    SECTION("GNU hash chain without an end") {
        std::string bytes = original;
        auto file = ElfFile::parse(in_memory(original));
        const auto* hash_section = file->section(".gnu.hash");
        std::uint32_t buckets = 0, bloom = 0;
        std::memcpy(&buckets, original.data() + hash_section->offset, 4);
        std::memcpy(&bloom, original.data() + hash_section->offset + 8, 4);
        const std::uint64_t chains = hash_section->offset + 16 + 8 * bloom + 4 * buckets;
        for (std::uint64_t at = chains; at + 4 <= hash_section->offset + hash_section->size; at += 4)
            poke<std::uint32_t>(bytes, at, 0);  // no end bit anywhere; no hash matches
        for (std::uint32_t i = 0; i < bloom; ++i)
            poke<std::uint64_t>(bytes, hash_section->offset + 16 + 8 * i, ~std::uint64_t{0});
        // Runs past the table into whatever follows, then off the end of the file: an error.
        auto reread = ElfFile::parse(in_memory(bytes));
        REQUIRE(reread.ok());
        auto answer = reread->exports_symbol(set_device);
        if (answer.ok()) CHECK_FALSE(*answer);
        else CHECK(answer.error().kind == ReadErrorKind::malformed);
    }
}
