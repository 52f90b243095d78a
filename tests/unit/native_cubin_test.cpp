// Cubins (flashinfer-cubin's .cubin files) and cuDNN libraries' file names:
// the target read from a cubin's ELF header in both of CUDA's ELF ABIs, and
// the version a cuDNN library's name carries.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "native/cubin.h"
#include "native/cudnn_files.h"
#include "native/elf_file.h"
#include "native/kernel_support.h"
#include "support/synthetic_elf.h"
#include "test_support.h"

using namespace provision::native;
using provision::ComputeCapability;

namespace {

CubinTarget target_of(const std::string& bytes) {
    auto file = ElfFile::parse(std::make_shared<MemorySource>(bytes, "kernel.cubin"));
    REQUIRE(file);
    REQUIRE(is_cubin(*file));
    return cubin_target(*file);
}

}  // namespace

TEST_CASE("a cubin's target: the SM number in the low byte (ABI 7) or in bits 8-15 (ABI 8)", "[native][cubin]") {
    const auto hopper = target_of(synthetic_elf::cubin(90, 7, true));
    REQUIRE(hopper.target);
    CHECK(hopper.target->str() == "sm_90a");
    CHECK(target_of(synthetic_elf::cubin(80, 7)).target->str() == "sm_80");

    const auto b200 = target_of(synthetic_elf::cubin(100, 8));
    REQUIRE(b200.target);
    CHECK(b200.target->arch == 100);
    // ABI 8 leaves the "a" mark unread: plain SASS of its major version.
    CHECK(b200.target->variant == ArchVariant::plain);
    CHECK(runs_on(*b200.target, ComputeCapability{10, 3}));
    CHECK_FALSE(runs_on(*b200.target, ComputeCapability{12, 0}));
    CHECK(target_of(synthetic_elf::cubin(121, 8)).target->capability_str() == "12.1");
}

TEST_CASE("a cubin whose target cannot be told says why", "[native][cubin]") {
    auto unknown_abi = synthetic_elf::cubin(100, 8);
    unknown_abi[EI_ABIVERSION] = 9;
    const auto unknown = target_of(unknown_abi);
    CHECK_FALSE(unknown.target);
    CHECK(unknown.problem == "unknown CUDA ELF ABI version 9");
    const auto tiny = target_of(synthetic_elf::cubin(3, 8));
    CHECK_FALSE(tiny.target);
    CHECK(tiny.problem == "SM number 3 is no architecture");
    // A shared library is no cubin.
    auto library = ElfFile::parse(std::make_shared<MemorySource>(synthetic_elf::build({}), "x.so"));
    REQUIRE(library);
    CHECK_FALSE(is_cubin(*library));
}

TEST_CASE("one cubin is one unit of device code", "[native][cubin]") {
    const auto summary = single_target_summary({CodeKind::sass, 100, ArchVariant::plain});
    CHECK(summary.containers == 1);
    CHECK(decide_kernel_support(summary, {10, 0}).runs == KernelSupport::sass);
    CHECK(decide_kernel_support(summary, {12, 0}).runs == KernelSupport::no);
}

TEST_CASE("the version a cuDNN library's file name carries", "[native][cudnn]") {
    CHECK(cudnn_version_in_name("libcudnn.so.9.10.2") == "9.10.2");
    CHECK(cudnn_version_in_name("libcudnn_graph.so.9.15.1") == "9.15.1");
    CHECK(cudnn_version_in_name("libcudnn.so.9") == "");  // a wheel's: the major version alone
    for (const char* name : {"libcudnn.so", "libcudnn.so.", "libcudnn.so.9.1", "libcudnn.so.9.1.2.3",
                             "libcudnn.so.9..2", "libcudnn.so.9.x.2", "libcudnn_ops.so.9.1.0",
                             "libcudnn.so.1234567.0.0", "libcublas.so.13.0.0"}) {
        INFO(name);
        CHECK_FALSE(cudnn_version_in_name(name).has_value());
    }
}

TEST_CASE("the first folder holding cuDNN decides, a full version preferred in it", "[native][cudnn]") {
    test_support::TempDir dir;
    std::filesystem::create_directories(dir.file("first"));
    std::filesystem::create_directories(dir.file("second"));
    test_support::write_file(dir.file("first/libcudnn.so.9"), "");
    test_support::write_file(dir.file("first/libcudnn.so.9.16.0"), "");
    test_support::write_file(dir.file("second/libcudnn.so.9.20.0"), "");
    const auto found = find_cudnn_file({dir.file("missing"), dir.file("first"), dir.file("second")});
    REQUIRE(found);
    CHECK(found->path == dir.file("first/libcudnn.so.9.16.0"));
    CHECK(found->version == "9.16.0");
    CHECK_FALSE(find_cudnn_file({dir.file("missing")}));
}
