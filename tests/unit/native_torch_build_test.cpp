// torch's and xFormers' build files, and the driver against the CUDA a
// package was built with.
#include <sys/stat.h>

#include <string>

#include <catch2/catch.hpp>

#include "native/driver_compat.h"
#include "native/torch_build.h"
#include "test_support.h"

using namespace provision::native;

TEST_CASE("torch/version.py of a CUDA build", "[native][torch]") {
    // As torch 2.11.0+cu130 writes it.
    const auto build = parse_torch_version_py(
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
        "__version__ = '2.11.0+cu130'\n"
        "debug = False\n"
        "cuda: Optional[str] = '13.0'\n"
        "git_version = '70d99e998b9ad7e9d2b8f8c2b9d6e0c8a0b1c2d3'\n"
        "hip: Optional[str] = None\n"
        "xpu: Optional[str] = None\n");
    REQUIRE(build);
    CHECK(build->version == "2.11.0+cu130");
    CHECK(build->cuda == "13.0");
    CHECK_FALSE(build->hip);
    CHECK(build->backend == TorchBackend::cuda);
    CHECK(to_string(build->backend) == "cuda");
}

TEST_CASE("torch/version.py of CPU, ROCm and older builds", "[native][torch]") {
    const auto cpu = parse_torch_version_py("__version__ = '2.8.0+cpu'\ncuda: Optional[str] = None\nhip: Optional[str] = None\n");
    REQUIRE(cpu);
    CHECK(cpu->backend == TorchBackend::cpu);
    CHECK_FALSE(cpu->cuda);

    const auto rocm = parse_torch_version_py(
        "__version__ = '2.9.1+rocm6.4'\r\ncuda: Optional[str] = None\r\nhip: Optional[str] = '6.4.43482-0f2d60242'\r\n");
    REQUIRE(rocm);
    CHECK(rocm->backend == TorchBackend::rocm);
    CHECK(rocm->hip == "6.4.43482-0f2d60242");

    // torch 1.x and 2.0 wrote plain assignments with double quotes at times.
    const auto old = parse_torch_version_py("__version__ = \"2.0.1+cu118\"\ndebug = False\ncuda = \"11.8\"\nhip = None\n");
    REQUIRE(old);
    CHECK(old->version == "2.0.1+cu118");
    CHECK(old->cuda == "11.8");

    // Only simple assignments count; the first one wins.
    const auto tricky = parse_torch_version_py(
        "# cuda = '99.0'\nx.cuda = '98.0'\nif cuda == '97.0': pass\n__version__ = '2.5.0'\n"
        "cuda = '12.4'\ncuda = '12.6'\n");
    REQUIRE(tricky);
    CHECK(tricky->cuda == "12.4");

    CHECK_FALSE(parse_torch_version_py(""));
    CHECK_FALSE(parse_torch_version_py("cuda = '12.4'\n"));
    CHECK_FALSE(parse_torch_version_py("__version__ = ''\n"));
    CHECK_FALSE(parse_torch_version_py("__version__ = '2.5.0\n"));  // unterminated
}

TEST_CASE("torch/version.py is read from the file, and a FIFO is refused", "[native][torch]") {
    test_support::TempDir dir;
    test_support::write_file(dir.file("torch/version.py"), "__version__ = '2.7.1+cu128'\ncuda: Optional[str] = '12.8'\n");
    const auto build = read_torch_build(dir.file("torch/version.py"));
    REQUIRE(build.ok());
    CHECK(build->cuda == "12.8");

    test_support::write_file(dir.file("empty/version.py"), "");
    CHECK(read_torch_build(dir.file("empty/version.py")).error().kind == ReadErrorKind::malformed);
    CHECK(read_torch_build(dir.file("absent/version.py")).error().kind == ReadErrorKind::cannot_open);
    REQUIRE(::mkfifo(dir.file("fifo.py").c_str(), 0600) == 0);
    CHECK(read_torch_build(dir.file("fifo.py")).error().kind == ReadErrorKind::not_regular_file);
    test_support::write_file(dir.file("huge.py"), std::string(2 << 20, '#'));
    CHECK(read_torch_build(dir.file("huge.py")).error().kind == ReadErrorKind::malformed);
}

TEST_CASE("xformers/cpp_lib.json", "[native][torch]") {
    const auto build = parse_xformers_cpp_lib(
        R"({"version": {"cuda": 1208, "torch": "2.10.0+cu128", "python": "3.12.3", "flash": "v2.8.3", "use_torch_flash": true},)"
        R"( "env": {"TORCH_CUDA_ARCH_LIST": "8.0 9.0 10.0 12.0", "PYTORCH_ROCM_ARCH": null}})");
    REQUIRE(build);
    CHECK(build->torch == "2.10.0+cu128");
    CHECK(build->cuda == "12.8");
    CHECK(build->python == "3.12.3");

    CHECK(parse_xformers_cpp_lib(R"({"version": {"cuda": 1201, "torch": "2.2.0+cu121"}})")->cuda == "12.1");
    CHECK(parse_xformers_cpp_lib(R"({"version": {"cuda": 12080}})")->cuda == "12.8");
    CHECK_FALSE(parse_xformers_cpp_lib(R"({"version": {"cuda": null, "torch": "2.2.0+cpu"}})")->cuda);
    CHECK_FALSE(parse_xformers_cpp_lib(R"({"version": {"cuda": "12.8"}})")->cuda);
    CHECK_FALSE(parse_xformers_cpp_lib(R"({"version": {"cuda": -5}})")->cuda);
    CHECK_FALSE(parse_xformers_cpp_lib(R"({"version": 3})"));
    CHECK_FALSE(parse_xformers_cpp_lib(R"([1, 2])"));
    CHECK_FALSE(parse_xformers_cpp_lib(R"({"version": {"cuda": 12)"));
    CHECK_FALSE(parse_xformers_cpp_lib(""));

    test_support::TempDir dir;
    test_support::write_file(dir.file("cpp_lib.json"), R"({"version": {"cuda": 1206, "torch": "2.6.0+cu126"}})");
    CHECK(read_xformers_build(dir.file("cpp_lib.json"))->cuda == "12.6");
    test_support::write_file(dir.file("bad.json"), "{");
    CHECK(read_xformers_build(dir.file("bad.json")).error().kind == ReadErrorKind::malformed);
}

TEST_CASE("CUDA versions", "[native][driver]") {
    CHECK(CudaVersion::parse("13.0") == CudaVersion{13, 0});
    CHECK(CudaVersion::parse("12.8.1") == CudaVersion{12, 8});
    CHECK(CudaVersion::parse("12.8")->str() == "12.8");
    for (const char* bad : {"", "13", "13.", ".0", "a.b", "12.8.x", "12.8.1.2", "-1.0", "99999.0"}) {
        INFO(bad);
        CHECK_FALSE(CudaVersion::parse(bad));
    }
    CHECK(CudaVersion{12, 10} > CudaVersion{12, 9});
}

TEST_CASE("the driver against the CUDA a package was built with", "[native][driver]") {
    const CudaVersion cuda_13_0{13, 0}, cuda_12_8{12, 8}, cuda_12_2{12, 2}, cuda_13_2{13, 2};

    CHECK(check_driver(cuda_13_0, cuda_13_0, false).verdict == DriverVerdict::runs);
    CHECK(check_driver(cuda_12_8, cuda_13_0, true).verdict == DriverVerdict::runs);  // newer drivers run older builds

    // A cu130 torch on a driver that reports CUDA 12.8 (R570): never.
    const auto too_old = check_driver(cuda_13_0, cuda_12_8, false);
    CHECK(too_old.verdict == DriverVerdict::driver_too_old);
    CHECK(too_old.cuda_needed == cuda_13_0);
    CHECK(too_old.driver_needed == "580.65.06");
    CHECK(to_string(too_old.verdict) == "driver-too-old");

    // Same major, newer minor: minor-version compatibility, unless PTX must be JIT-compiled.
    CHECK(check_driver(cuda_12_8, cuda_12_2, false).verdict == DriverVerdict::runs_minor_compat);
    const auto jit = check_driver(cuda_12_8, cuda_12_2, true);
    CHECK(jit.verdict == DriverVerdict::driver_too_old);
    CHECK(jit.cuda_needed == cuda_12_8);
    CHECK_FALSE(jit.driver_needed);
    CHECK(check_driver(cuda_13_2, cuda_13_0, false).verdict == DriverVerdict::runs_minor_compat);

    CHECK(check_driver({12, 1}, {11, 8}, false).driver_needed == "525.60.13");
    CHECK_FALSE(check_driver({14, 0}, {13, 0}, false).driver_needed);  // not in the table yet
    const std::vector<DriverMinimum> custom{{14, "610.10"}};
    CHECK(check_driver({14, 0}, {13, 0}, false, custom).driver_needed == "610.10");
}
