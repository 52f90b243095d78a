// The readers of what the workload installed stay linear in their input,
// with the caps docs/DESIGN.md states ("Reading what the workload
// installed"): counted here as reads, bytes read, chain steps and rows
// visited, never as time.
#include <elf.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "native/byte_source.h"
#include "native/elf_file.h"
#include "native/fatbin.h"
#include "native_test_data.h"
#include "packages/installed_files.h"
#include "python/python_build.h"
#include "support/synthetic_elf.h"
#include "test_support.h"

using namespace provision;
using native::ByteSource;
using native::ElfFile;
using native::MemorySource;
using native::ReadErrorKind;

namespace {

// A source that counts what is read from it.
class CountingSource final : public ByteSource {
public:
    explicit CountingSource(std::string bytes) : inner_(std::move(bytes), "counted.so") {}
    std::uint64_t size() const override { return inner_.size(); }
    bool read_at(std::uint64_t offset, void* out, std::size_t length) const override {
        ++reads;
        bytes += length;
        return inner_.read_at(offset, out, length);
    }
    const std::string& name() const override { return inner_.name(); }

    mutable std::uint64_t reads = 0;
    mutable std::uint64_t bytes = 0;

private:
    MemorySource inner_;
};

std::vector<std::string> c10_names(std::size_t count) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < count; ++i) names.push_back(fmt::format("_ZN3c104f{:04}Ev", i));
    return names;
}

}  // namespace

TEST_CASE("ELF section names: 65,535 sections naming one 16 MiB string without an end", "[native][elf][bounds]") {
    const std::string bytes = synthetic_elf::endless_section_names(65535, 16u << 20);
    auto source = std::make_shared<CountingSource>(bytes);
    auto file = ElfFile::parse(source);
    REQUIRE(file.ok());
    REQUIRE(file->sections().size() == 65535);
    std::size_t name_bytes = 0;
    for (const auto& section : file->sections()) {
        CHECK(section.name.size() <= ElfFile::kMaxSectionNameBytes);
        name_bytes += section.name.size();
    }
    // Each name is cut, none is found by name, and what is held stays small.
    CHECK(file->sections()[2].name_cut);
    CHECK(file->section(std::string(ElfFile::kMaxSectionNameBytes, 'n')) == nullptr);
    CHECK(name_bytes <= 65535 * ElfFile::kMaxSectionNameBytes);
    // The header, the section headers and the name table, each read once
    // (the identification bytes and section 0 are looked at first, alone).
    CHECK(source->bytes <= bytes.size() + 1024);
    CHECK(source->reads <= 8);
}

TEST_CASE("a GNU hash chain without an end costs one budget for all lookups, then answers at once",
          "[native][elf][bounds]") {
    const std::vector<synthetic_elf::Symbol> exported{{"_ZN3c104cuda9SetDeviceEi"}};
    const std::string bytes = synthetic_elf::shared_library(exported, (1u << 20) + 16, /*endless_chain=*/true);
    auto source = std::make_shared<CountingSource>(bytes);
    auto file = ElfFile::parse(source);
    REQUIRE(file.ok());
    // The one real symbol is found before the chain's trouble starts.
    CHECK(*file->exports_symbol("_ZN3c104cuda9SetDeviceEi"));
    std::size_t refused = 0;
    for (const auto& name : c10_names(200)) {
        const auto answer = file->exports_symbol(name);
        if (!answer && answer.error().kind == ReadErrorKind::malformed) ++refused;
    }
    CHECK(refused == 200);
    CHECK(file->lookup_steps() <= ElfFile::kMaxLookupSteps + 1);
    // The chain is read in chunks, once: not 200 times.
    CHECK(source->bytes <= bytes.size() + 4096);
    CHECK(source->reads <= (ElfFile::kMaxLookupSteps / 256) + 64);
    const auto steps = file->lookup_steps();
    CHECK_FALSE(file->exports_symbol("_ZN3c104cuda9SetDeviceEi").ok());  // remembered: the table is broken
    CHECK(file->lookup_steps() == steps);
}

TEST_CASE("a well-formed GNU hash table answers in a few steps per lookup", "[native][elf][bounds]") {
    std::vector<synthetic_elf::Symbol> exported;
    for (const auto& name : c10_names(1000)) exported.push_back({name});
    auto file = ElfFile::parse(std::make_shared<MemorySource>(synthetic_elf::shared_library(exported), "lib.so"));
    REQUIRE(file.ok());
    CHECK(*file->exports_symbol("_ZN3c104f0999Ev"));
    CHECK_FALSE(*file->exports_symbol("_ZN3c104f1000Ev"));
    // One bucket holds all 1000: the worst shape a valid table has.
    CHECK(file->lookup_steps() <= 2000);
}

TEST_CASE("a SysV hash chain that loops is stopped by the same budget", "[native][elf][bounds]") {
    std::string bytes = test_support::read_file(native_test::data_path("sysv/libc10_sysv_hash.so"));
    auto original = ElfFile::parse(native_test::in_memory(bytes));
    REQUIRE(original.ok());
    const auto* hash = original->section(".hash");
    REQUIRE(hash != nullptr);
    std::uint32_t buckets = 0, chains = 0;
    std::memcpy(&buckets, bytes.data() + hash->offset, 4);
    std::memcpy(&chains, bytes.data() + hash->offset + 4, 4);
    // Every bucket starts at symbol 1, whose chain leads back to itself.
    for (std::uint32_t i = 0; i < buckets; ++i) native_test::poke<std::uint32_t>(bytes, hash->offset + 8 + 4 * i, 1);
    for (std::uint32_t i = 0; i < chains; ++i)
        native_test::poke<std::uint32_t>(bytes, hash->offset + 8 + 4 * buckets + 4 * i, 1);
    auto file = ElfFile::parse(native_test::in_memory(bytes));
    REQUIRE(file.ok());
    const auto answer = file->exports_symbol("_ZN3c104cuda14ExchangeDeviceEi");
    REQUIRE_FALSE(answer.ok());
    CHECK(answer.error().kind == ReadErrorKind::malformed);
    CHECK(file->lookup_steps() == ElfFile::kMaxLookupSteps + 1);
    CHECK_FALSE(file->exports_symbol("c10_plain_c_function").ok());
    CHECK(file->lookup_steps() == ElfFile::kMaxLookupSteps + 1);
}

TEST_CASE("fatbinary: reads stay within about twice the section, and the containers are capped",
          "[native][fatbin][bounds]") {
    SECTION("10,000 empty containers back to back are read through the window, not 64 KiB each") {
        const std::string section = synthetic_elf::empty_fatbin_containers(10000);
        CountingSource source(section);
        const auto summary = native::read_fatbin(source, 0, section.size());
        REQUIRE(summary.ok());
        CHECK(summary->containers == 10000);
        CHECK(source.bytes <= 2 * section.size());
        CHECK(source.reads <= section.size() / 256 + 2);
    }
    SECTION("more than 2^20 containers is malformed, found after reading 16 MiB once") {
        const std::string section = synthetic_elf::empty_fatbin_containers((1u << 20) + 1);
        CountingSource source(section);
        const auto summary = native::read_fatbin(source, 0, section.size());
        REQUIRE_FALSE(summary.ok());
        CHECK(summary.error().kind == ReadErrorKind::malformed);
        CHECK_THAT(summary.error().message, Catch::Contains("more than 1048576 containers"));
        CHECK(source.bytes <= 2 * section.size());
    }
    SECTION("padding between containers is scanned once") {
        std::string section;
        for (int i = 0; i < 1000; ++i) {
            section += synthetic_elf::empty_fatbin_containers(1);
            section.append(1000, '\0');  // garbage to skip, a multiple of 8
        }
        CountingSource source(section);
        const auto summary = native::read_fatbin(source, 0, section.size());
        REQUIRE(summary.ok());
        CHECK(summary->containers == 1000);
        CHECK(summary->skipped_bytes == 1000u * 1000u);
        CHECK(source.bytes <= 2 * section.size());
    }
}

TEST_CASE("RECORD: one pass, each row's path visited once", "[packages][bounds]") {
    SECTION("rows, quoted and plain, CRLF and blank ones") {
        std::vector<std::string> seen;
        std::size_t visited_bytes = 0;
        const std::string text = "a.py,sha256=x,1\r\n\n\"b,c.so\",,\nd.so";
        for_each_record_path(text, [&](std::string_view path) {
            seen.emplace_back(path);
            visited_bytes += path.size();
        });
        CHECK(seen == std::vector<std::string>{"a.py", "b,c.so", "d.so"});
        CHECK(visited_bytes <= text.size());
    }
    SECTION("2 MiB of '.cpython-' without a newline is one row, looked at once") {
        std::string text;
        while (text.size() < (2u << 20)) text += ".cpython-";
        std::size_t rows = 0;
        for_each_record_path(text, [&](std::string_view) { ++rows; });
        CHECK(rows == 1);
        CHECK_FALSE(python_build_from_record(text));
    }
    SECTION("rows without commas") {
        std::string text;
        for (int i = 0; i < 100000; ++i) text += "pkg/module.cpython-312-x86_64-linux-gnu.so.txt\n";
        text += "pkg/_C.cpython-311-x86_64-linux-gnu.so\n";
        std::size_t rows = 0;
        for_each_record_path(text, [&](std::string_view) { ++rows; });
        CHECK(rows == 100001);
        const auto build = python_build_from_record(text);
        REQUIRE(build);
        CHECK(build->versions == std::vector<PythonVersion>{{3, 11}});
    }
}

TEST_CASE("RECORD: a module listed again is read once; more than 4096 distinct ones is refused",
          "[packages][bounds]") {
    test_support::TempDir dir;
    const std::string dist_info = dir.file("pkg-1.0.dist-info");
    std::filesystem::create_directories(dist_info);
    std::string text;
    for (int i = 0; i < 200000; ++i) text += "a.so,sha256=x,1\n";
    text += "b.so,,\n";
    test_support::write_file(dist_info + "/RECORD", text);
    std::string error;
    const auto files = installed_files_ending(dist_info, ".so", error);
    REQUIRE(files);
    CHECK(*files == std::vector<std::string>{dir.file("a.so"), dir.file("b.so")});

    text.clear();
    for (std::size_t i = 0; i <= kMaxRecordFiles; ++i) text += fmt::format("m{}.so,,\n", i);
    test_support::write_file(dist_info + "/RECORD", text);
    CHECK_FALSE(installed_files_ending(dist_info, ".so", error));
    CHECK(error == "lists more than 4096 files ending in .so");
}
