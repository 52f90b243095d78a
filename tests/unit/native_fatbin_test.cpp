// The fatbinary reader and the kernel decision: on libraries nvcc built
// with chosen targets (tests/native/CMakeLists.txt), checked against
// cuobjdump where it is installed, and on fatbinaries written here byte by
// byte, well-formed and not.
#include <elf.h>

#include <array>
#include <cstring>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "native/elf_file.h"
#include "native/fatbin.h"
#include "native/kernel_support.h"
#include "native_test_data.h"

using namespace provision::native;
using provision::ComputeCapability;
using native_test::data_path;
using native_test::in_memory;

namespace {

Target sm(int arch, ArchVariant variant = ArchVariant::plain) { return {CodeKind::sass, arch, variant}; }
Target compute(int arch, ArchVariant variant = ArchVariant::plain) { return {CodeKind::ptx, arch, variant}; }
constexpr auto a = ArchVariant::arch_specific;
constexpr auto f = ArchVariant::family;

ComputeCapability cc(const char* text) { return *ComputeCapability::parse(text); }

FatbinSummary scan(const std::string& path) {
    auto file = ElfFile::open(path);
    REQUIRE(file.ok());
    auto summary = read_fatbin(*file);
    REQUIRE(summary.ok());
    return *summary;
}

// Writes fatbinaries by hand: containers of entries with the header layout
// the layout in src/native/fatbin.h and dummy payloads.
struct FatbinWriter {
    std::string bytes;

    template <typename T>
    void put(T value) {
        bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    struct Entry {
        std::uint16_t kind;  // 1 PTX, 2 ELF
        std::uint32_t arch;
        std::uint64_t flags = 0x11;
        std::uint32_t header_size = 0x40;
        std::size_t payload = 24;
    };
    static std::string entry(const Entry& e) {
        FatbinWriter w;
        w.put(e.kind);
        w.put(std::uint16_t{0x0101});
        w.put(e.header_size);
        w.put(std::uint64_t{e.payload});
        w.put(std::uint32_t{0});  // compressed size
        w.put(std::uint32_t{0});  // options offset
        w.put(std::uint16_t{8});  // minor
        w.put(std::uint16_t{1});  // major
        w.put(e.arch);
        w.put(std::uint32_t{0});  // name offset
        w.put(std::uint32_t{0});  // name length
        w.put(e.flags);
        w.put(std::uint64_t{0});
        w.put(std::uint64_t{0});  // decompressed size
        w.bytes.resize(e.header_size, '\0');
        w.bytes.append(e.payload, '\x5a');
        return w.bytes;
    }
    void container(const std::vector<Entry>& entries) {
        std::string body;
        for (const Entry& e : entries) body += entry(e);
        put(std::uint32_t{0xBA55ED50});
        put(std::uint16_t{1});
        put(std::uint16_t{16});
        put(std::uint64_t{body.size()});
        bytes += body;
    }
    void pad_to(std::size_t alignment) { bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, '\0'); }
};

ReadResult<FatbinSummary> read_bytes(const std::string& bytes) {
    const MemorySource source(bytes, "test.fatbin");
    return read_fatbin(source, 0, bytes.size());
}

// cuobjdump's lines per target: "ELF file    1: libx.1.sm_90a.cubin" and
// "PTX file    1: libx.1.sm_120.ptx".
std::map<std::string, std::size_t> cuobjdump_counts(const std::string& option, const std::string& path) {
    std::map<std::string, std::size_t> counts;
    const std::string command = std::string(PROVISION_CUOBJDUMP) + " " + option + " " + path + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    REQUIRE(pipe);
    std::array<char, 4096> line{};
    const std::regex target(R"(\.(sm_[0-9]+[af]?)\.(cubin|ptx))");
    while (std::fgets(line.data(), line.size(), pipe.get())) {
        std::cmatch match;
        if (std::regex_search(line.data(), match, target))
            ++counts[(match[2] == "ptx" ? "compute_" : "sm_") + match[1].str().substr(3)];
    }
    return counts;
}

std::map<std::string, std::size_t> reader_counts(const FatbinSummary& summary, CodeKind kind) {
    std::map<std::string, std::size_t> counts;
    for (const auto& [target, n] : summary.entries_with)
        if (target.kind == kind) counts[target.str()] = n;
    return counts;
}

}  // namespace

TEST_CASE("targets print as cuobjdump names them", "[native][fatbin]") {
    CHECK(sm(90).str() == "sm_90");
    CHECK(sm(90, a).str() == "sm_90a");
    CHECK(sm(100, f).str() == "sm_100f");
    CHECK(compute(120).str() == "compute_120");
    CHECK(sm(90, a).capability_str() == "9.0a");
    CHECK(compute(120).capability_str() == "12.0");
    CHECK(sm(121).capability_str() == "12.1");
    CHECK(sm(121).major() == 12);
    CHECK(sm(121).minor() == 1);
}

TEST_CASE("nvcc-built libraries: the reader counts what nvcc was asked for", "[native][fatbin][nvcc]") {
    if (!native_test::have_cuda_data) {
        WARN("no nvcc at build time: the CUDA test libraries were not built");
        return;
    }
    SECTION("a torch-like library: three units for sm_80/86/90, one for sm_90a") {
        const auto s = scan(data_path("cuda/libtorch_cuda.so"));
        CHECK(s.containers == 4);
        CHECK(s.entries == 10);
        CHECK(s.other_entries == 0);
        CHECK(s.containers_with == std::map<Target, std::size_t>{{sm(80), 3}, {sm(86), 3}, {sm(90), 3}, {sm(90, a), 1}});
        CHECK(s.entries_with == s.containers_with);
        REQUIRE(s.target_sets.size() == 2);
        CHECK(carried_targets(s, CodeKind::sass) == std::vector<Target>{sm(80), sm(86), sm(90)});
        CHECK(carried_targets(s, CodeKind::ptx).empty());
    }
    SECTION("SASS in one unit, PTX in both") {
        const auto s = scan(data_path("cuda/libptx.so"));
        CHECK(s.containers == 2);
        CHECK(s.containers_with == std::map<Target, std::size_t>{{sm(80), 1}, {compute(90), 2}});
    }
    SECTION("arch-specific and family targets") {
        const auto s = scan(data_path("cuda/libvariants.so"));
        CHECK(s.containers == 1);
        CHECK(s.containers_with ==
              std::map<Target, std::size_t>{{sm(100, f), 1}, {sm(120, a), 1}, {compute(120), 1}});
    }
    SECTION("a library without device code has no containers") {
        const auto s = scan(data_path("torch/lib/libc10.so"));
        CHECK(s.containers == 0);
        CHECK(s.target_sets.empty());
        CHECK(decide_kernel_support(s, cc("9.0")).units == 0);
    }
}

TEST_CASE("nvcc-built libraries: cuobjdump agrees with the reader", "[native][fatbin][nvcc]") {
    if (!native_test::have_cuda_data || std::string(PROVISION_CUOBJDUMP).empty() ||
        std::string(PROVISION_CUOBJDUMP).ends_with("NOTFOUND")) {
        WARN("no cuobjdump: the reader is not compared with it");
        return;
    }
    for (const char* name : {"cuda/libtorch_cuda.so", "cuda/libptx.so", "cuda/libvariants.so"}) {
        INFO(name);
        const auto s = scan(data_path(name));
        CHECK(cuobjdump_counts("--list-elf", data_path(name)) == reader_counts(s, CodeKind::sass));
        CHECK(cuobjdump_counts("--list-ptx", data_path(name)) == reader_counts(s, CodeKind::ptx));
    }
}

TEST_CASE("nvcc-built libraries: the decision per GPU", "[native][kernels][nvcc]") {
    if (!native_test::have_cuda_data) return;
    const auto torch = scan(data_path("cuda/libtorch_cuda.so"));
    CHECK(decide_kernel_support(torch, cc("9.0")).runs == KernelSupport::sass);
    CHECK(decide_kernel_support(torch, cc("8.0")).runs == KernelSupport::sass);
    CHECK(decide_kernel_support(torch, cc("8.9")).runs == KernelSupport::sass);  // by sm_86
    CHECK(decide_kernel_support(torch, cc("12.0")).runs == KernelSupport::no);   // an RTX 5090
    CHECK(decide_kernel_support(torch, cc("7.0")).runs == KernelSupport::no);    // a V100
    const auto on_h100 = decide_kernel_support(torch, cc("9.0"));
    CHECK(on_h100.units == 4);
    CHECK(on_h100.units_by_sass == 4);
    const auto on_a100 = decide_kernel_support(torch, cc("8.0"));
    CHECK(on_a100.units_by_sass == 3);

    const auto ptx = scan(data_path("cuda/libptx.so"));
    CHECK(decide_kernel_support(ptx, cc("12.0")).runs == KernelSupport::ptx_jit);
    CHECK(decide_kernel_support(ptx, cc("9.0")).runs == KernelSupport::ptx_jit);
    CHECK(decide_kernel_support(ptx, cc("8.0")).runs == KernelSupport::sass);  // one of two units: half
    CHECK(decide_kernel_support(ptx, cc("7.5")).runs == KernelSupport::no);

    const auto variants = scan(data_path("cuda/libvariants.so"));
    CHECK(decide_kernel_support(variants, cc("10.0")).runs == KernelSupport::sass);  // sm_100f
    CHECK(decide_kernel_support(variants, cc("10.3")).runs == KernelSupport::sass);  // sm_100f: the family
    CHECK(decide_kernel_support(variants, cc("12.0")).runs == KernelSupport::sass);  // sm_120a, exactly
    CHECK(decide_kernel_support(variants, cc("12.1")).runs == KernelSupport::ptx_jit);  // compute_120
    CHECK(decide_kernel_support(variants, cc("11.0")).runs == KernelSupport::no);
}

TEST_CASE("the compatibility rule per target", "[native][kernels]") {
    CHECK(runs_on(sm(80), cc("8.0")));
    CHECK(runs_on(sm(80), cc("8.6")));
    CHECK(runs_on(sm(80), cc("8.9")));
    CHECK_FALSE(runs_on(sm(86), cc("8.0")));
    CHECK_FALSE(runs_on(sm(80), cc("9.0")));  // SASS never crosses a major
    CHECK_FALSE(runs_on(sm(90), cc("12.0")));
    CHECK(runs_on(sm(120), cc("12.1")));
    CHECK(runs_on(sm(90, a), cc("9.0")));
    CHECK_FALSE(runs_on(sm(100, a), cc("10.3")));  // arch-specific: exactly that GPU
    CHECK(runs_on(sm(100, f), cc("10.3")));
    CHECK_FALSE(runs_on(sm(103, f), cc("10.0")));
    CHECK_FALSE(runs_on(sm(100, f), cc("12.0")));
    CHECK(runs_on(compute(80), cc("12.0")));  // PTX: JIT for anything newer
    CHECK(runs_on(compute(80), cc("8.0")));
    CHECK_FALSE(runs_on(compute(90), cc("8.9")));
    CHECK(runs_on(compute(90, a), cc("9.0")));
    CHECK_FALSE(runs_on(compute(90, a), cc("10.0")));
}

TEST_CASE("Blackwell's two families never run each other's code", "[native][kernels]") {
    for (const char* gpu : {"12.0", "12.1"}) {
        INFO(gpu);
        CHECK_FALSE(runs_on(sm(100, a), cc(gpu)));
        CHECK_FALSE(runs_on(sm(100, f), cc(gpu)));
        CHECK_FALSE(runs_on(sm(100), cc(gpu)));
        CHECK_FALSE(runs_on(sm(103, a), cc(gpu)));
    }
    for (const char* gpu : {"10.0", "10.3", "11.0"}) {
        INFO(gpu);
        CHECK_FALSE(runs_on(sm(120, a), cc(gpu)));
        CHECK_FALSE(runs_on(sm(120, f), cc(gpu)));
    }
    CHECK_FALSE(runs_on(sm(120, a), cc("12.1")));  // sm_120a is the RTX 50xx's alone, not the DGX Spark's
    CHECK(runs_on(sm(120, f), cc("12.1")));        // the family target serves both
    CHECK(runs_on(sm(121, a), cc("12.1")));
    CHECK_FALSE(runs_on(sm(100, a), cc("11.0")));  // Thor is datacenter Blackwell, but another major
    CHECK(runs_on(sm(110, a), cc("11.0")));
}

// Rubin, 10.7 (docs/DESIGN.md "Attention mechanisms and Blackwell's
// families"): the arch-specific targets of 10.0 and 10.3 never run on it, the
// plain and family ones of major 10 do (the same major, a higher minor: NVIDIA's
// CUDA Programming Guide, "Family-specific features"), and its own sm_107a
// and sm_107f run on it alone among today's GPUs.
TEST_CASE("Rubin runs major 10's plain and family code, never its arch-specific code", "[native][kernels]") {
    const ComputeCapability rubin = cc("10.7");
    CHECK_FALSE(runs_on(sm(100, a), rubin));
    CHECK_FALSE(runs_on(sm(103, a), rubin));
    CHECK(runs_on(sm(100), rubin));
    CHECK(runs_on(sm(103), rubin));
    CHECK(runs_on(sm(100, f), rubin));
    CHECK(runs_on(sm(103, f), rubin));
    CHECK(runs_on(sm(107, a), rubin));
    CHECK(runs_on(sm(107, f), rubin));
    CHECK(runs_on(compute(100), rubin));  // PTX: JIT, with a driver that knows its PTX version
    CHECK_FALSE(runs_on(compute(100, a), rubin));
    for (const char* other : {"10.0", "10.3", "11.0", "12.0"}) {
        INFO(other);
        CHECK_FALSE(runs_on(sm(107, a), cc(other)));
        CHECK_FALSE(runs_on(sm(107, f), cc(other)));
        CHECK_FALSE(runs_on(sm(107), cc(other)));
    }
    CHECK_FALSE(runs_on(sm(120), rubin));
    CHECK_FALSE(runs_on(sm(110, a), rubin));
}

TEST_CASE("the bulk of the library decides, not a few special units", "[native][kernels]") {
    // torch 2.11+cu130 as measured: 444 units; a few also carry a special target.
    FatbinSummary torch;
    const std::vector<Target> bulk{sm(75), sm(80), sm(86), sm(90), sm(100), sm(120)};
    auto with = [&](std::vector<Target> extra) {
        std::vector<Target> targets = bulk;
        targets.insert(targets.end(), extra.begin(), extra.end());
        std::sort(targets.begin(), targets.end());
        return targets;
    };
    torch.target_sets = {{with({}), 380}, {with({sm(100, a), sm(103, a)}), 59}, {with({sm(90, a)}), 4},
                         {with({sm(89)}), 1}};
    torch.containers = 444;
    for (const auto& set : torch.target_sets)
        for (const auto& t : set.targets) torch.containers_with[t] += set.containers;
    CHECK(carried_targets(torch, CodeKind::sass) == bulk);
    CHECK(decide_kernel_support(torch, cc("8.9")).runs == KernelSupport::sass);  // by sm_86 in all 444
    CHECK(decide_kernel_support(torch, cc("10.3")).runs == KernelSupport::sass);  // by sm_100
    CHECK(decide_kernel_support(torch, cc("12.1")).runs == KernelSupport::sass);  // by sm_120
    CHECK(decide_kernel_support(torch, cc("7.0")).runs == KernelSupport::no);
    CHECK(decide_kernel_support(torch, cc("11.0")).runs == KernelSupport::no);

    // A library whose bulk lacks Ada: its one sm_89 unit does not make Ada "sass".
    FatbinSummary old;
    old.target_sets = {{{sm(80)}, 443}, {{sm(89)}, 1}};
    old.containers = 444;
    CHECK(decide_kernel_support(old, cc("8.9")).runs == KernelSupport::sass);  // sm_80 runs on 8.9
    CHECK(decide_kernel_support(old, cc("9.0")).runs == KernelSupport::no);
    FatbinSummary lean;
    lean.target_sets = {{{sm(90)}, 443}, {{sm(89)}, 1}};
    lean.containers = 444;
    const auto on_ada = decide_kernel_support(lean, cc("8.9"));
    CHECK(on_ada.runs == KernelSupport::no);
    CHECK(on_ada.units_by_sass == 1);
    CHECK(on_ada.units == 444);
    // A stricter share is a parameter.
    CHECK(decide_kernel_support(old, cc("8.9"), 1.0).runs == KernelSupport::sass);
    CHECK(decide_kernel_support(lean, cc("9.0"), 1.0).runs == KernelSupport::no);
}

TEST_CASE("per-architecture modules count together", "[native][kernels]") {
    // SageAttention: _qattn_sm80, _qattn_sm89, _qattn_sm90 are separate files.
    FatbinWriter sm80, sm89, sm90;
    sm80.container({{2, 80}});
    sm89.container({{2, 89}});
    sm90.container({{2, 90, 0x100011}});
    FatbinSummary total;
    for (const auto* w : {&sm80, &sm89, &sm90}) {
        auto s = read_bytes(w->bytes);
        REQUIRE(s.ok());
        merge_into(total, *s);
    }
    CHECK(total.containers == 3);
    CHECK(total.containers_with.size() == 3);
    CHECK(decide_kernel_support(total, cc("8.0")).units_by_sass == 1);
    CHECK(decide_kernel_support(total, cc("8.9")).units_by_sass == 2);
    CHECK(decide_kernel_support(total, cc("12.0")).runs == KernelSupport::no);
    merge_into(total, *read_bytes(sm80.bytes));
    CHECK(total.containers == 4);
    CHECK(total.target_sets.size() == 3);  // the same set is merged, not repeated
}

TEST_CASE("hand-written fatbinaries: padding, kinds and flags", "[native][fatbin]") {
    FatbinWriter w;
    w.container({{2, 80}, {2, 90, 0x100011}, {1, 90, 0x108011, 0x50}});
    w.bytes.append(3, '\0');  // padding to the next 8-byte boundary
    w.pad_to(8);
    w.bytes.append(16, '\0');  // and a little more
    w.container({{2, 100, 0x1200011, 0x60}, {2, 80}, {2, 80}, {7, 0}});
    w.pad_to(64);
    auto s = read_bytes(w.bytes);
    REQUIRE(s.ok());
    CHECK(s->containers == 2);
    CHECK(s->entries == 7);
    CHECK(s->other_entries == 1);
    CHECK(s->skipped_bytes > 16);
    CHECK(s->containers_with ==
          std::map<Target, std::size_t>{{sm(80), 2}, {sm(90, a), 1}, {compute(90, a), 1}, {sm(100, f), 1}});
    CHECK(s->entries_with.at(sm(80)) == 3);  // twice in the second container
}

TEST_CASE("malformed fatbinaries give errors, never a crash", "[native][fatbin][malformed]") {
    FatbinWriter good;
    good.container({{2, 80}, {2, 90}});
    REQUIRE(read_bytes(good.bytes).ok());
    auto malformed = [](const std::string& bytes) {
        auto s = read_bytes(bytes);
        return !s.ok() && s.error().kind == ReadErrorKind::malformed;
    };
    SECTION("every truncation is refused") {
        for (std::size_t length = 1; length < good.bytes.size(); ++length) {
            INFO("first " << length << " bytes");
            auto s = read_bytes(good.bytes.substr(0, length));
            if (length < 4) CHECK(s.ok());  // too short for a magic: nothing found
            else CHECK(malformed(good.bytes.substr(0, length)));
        }
    }
    SECTION("a container larger than the section") {
        std::string bytes = good.bytes;
        native_test::poke<std::uint64_t>(bytes, 8, ~std::uint64_t{0});
        CHECK(malformed(bytes));
        native_test::poke<std::uint64_t>(bytes, 8, ~std::uint64_t{0} - 15);  // wraps to 0 with the header
        CHECK(malformed(bytes));
    }
    SECTION("a container header smaller than 16 bytes") {
        std::string bytes = good.bytes;
        native_test::poke<std::uint16_t>(bytes, 6, 0);
        CHECK(malformed(bytes));
    }
    SECTION("an entry header too small, which would never advance") {
        std::string bytes = good.bytes;
        native_test::poke<std::uint32_t>(bytes, 16 + 4, 0);
        CHECK(malformed(bytes));
    }
    SECTION("an entry payload larger than its container") {
        std::string bytes = good.bytes;
        native_test::poke<std::uint64_t>(bytes, 16 + 8, std::uint64_t{1} << 63);
        CHECK(malformed(bytes));
        native_test::poke<std::uint64_t>(bytes, 16 + 8, ~std::uint64_t{0} - 0x3f);  // wraps to 0
        CHECK(malformed(bytes));
    }
    SECTION("garbage without a magic is skipped, not read as a container") {
        std::string garbage(4096, '\x77');
        auto s = read_bytes(garbage);
        REQUIRE(s.ok());
        CHECK(s->containers == 0);
        CHECK(s->skipped_bytes == 4096);
    }
    SECTION("a section outside the file") {
        const MemorySource source(good.bytes, "short");
        CHECK_FALSE(read_fatbin(source, 8, good.bytes.size()).ok());
        CHECK_FALSE(read_fatbin(source, ~std::uint64_t{0}, 2).ok());
    }
    SECTION("a .nv_fatbin section header pointing past the end of an ELF file") {
        if (!native_test::have_cuda_data) return;
        const std::string original = test_support::read_file(data_path("cuda/libptx.so"));
        auto file = ElfFile::parse(in_memory(original));
        REQUIRE(file.ok());
        REQUIRE(read_fatbin(*file).ok());
        std::uint64_t section_headers = 0;
        std::memcpy(&section_headers, original.data() + offsetof(Elf64_Ehdr, e_shoff), 8);
        std::size_t index = 0;
        while (file->sections()[index].name != ".nv_fatbin") ++index;
        const std::uint64_t header = section_headers + index * sizeof(Elf64_Shdr);
        for (const auto& [field, value] : {std::pair{offsetof(Elf64_Shdr, sh_size), std::uint64_t{1} << 40},
                                           std::pair{offsetof(Elf64_Shdr, sh_offset), ~std::uint64_t{0} - 4}}) {
            std::string bytes = original;
            native_test::poke<std::uint64_t>(bytes, header + field, value);
            auto changed = ElfFile::parse(in_memory(bytes));
            REQUIRE(changed.ok());
            auto read = read_fatbin(*changed);
            REQUIRE_FALSE(read.ok());
            CHECK(read.error().kind == ReadErrorKind::malformed);
            CHECK_THAT(read.error().message, Catch::Contains("outside the file"));
        }
    }
}
