// The workload's NCCL read from files a hostile image author or user
// leaves: a library whose .rodata is NCCL's marker over and over, two NCCL
// wheels in one site folder, versions that do not read as versions, an empty
// LD_LIBRARY_PATH entry, a torch linked with DT_RUNPATH, and values that
// would drive the terminal.  Each run is on a simulated H100 (driver CUDA
// 13.0) without validation, so what is judged is what provision read.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"
#include "support/synthetic_elf.h"

using e2e::TempDir;
using e2e::has;

namespace {

namespace fs = std::filesystem;

// A run still going after this long is killed: a hang guard, no verdict.
constexpr double kGuardSeconds = 120;

std::string test_data(const std::string& file) { return std::string(PROVISION_NATIVE_TEST_DATA) + "/" + file; }

void write(const std::string& path, const std::string& contents) {
    fs::create_directories(fs::path(path).parent_path());
    e2e::write_file(path, contents);
}

// A libnccl.so.2 stand-in: an ELF file whose .rodata is `rodata`.
std::string nccl_library(const std::string& rodata) {
    return synthetic_elf::build({{.name = ".rodata", .type = SHT_PROGBITS, .bytes = rodata, .link = 0, .entry_size = 0}});
}

std::string build_string(const std::string& version) {
    return std::string("NCCL version ") + version + std::string(1, '\0');
}

// How libtorch_cuda.so looks for libnccl.so.2.
enum class TorchLink { rpath, runpath, neither };

// A site folder with torch 2.11 (CUDA 13.0) whose libtorch_cuda.so is linked
// as `link` says; returns the folder.
std::string torch_site(const TempDir& dir, TorchLink link) {
    const std::string site = dir.file("site-packages");
    write(site + "/torch-2.11.0+cu130.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n");
    write(site + "/torch/version.py", "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n");
    const std::string library = site + "/torch/lib/libtorch_cuda.so";
    fs::create_directories(site + "/torch/lib");
    switch (link) {
        case TorchLink::rpath: fs::copy_file(test_data("torch_rpath/torch_cuda_rpath.so"), library); break;
        case TorchLink::runpath: fs::copy_file(test_data("torch_runpath/torch_cuda_runpath.so"), library); break;
        case TorchLink::neither: fs::copy_file(test_data("torch/lib/libc10.so"), library); break;
    }
    return site;
}

// The nvidia-nccl-cuNN dist-info `name`-`version` in `site`; its RECORD lists
// the wheel's library with `size` when `size` is given.
void nccl_dist_info(const std::string& site, const std::string& name, const std::string& version,
                    std::optional<std::uint64_t> size) {
    const std::string folder = fmt::format("{}/{}-{}.dist-info", site, name, "x");
    write(folder + "/METADATA", fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
    std::string record = fmt::format("nvidia/nccl/__init__.py,,\n{}-x.dist-info/METADATA,,\n", name);
    if (size) record += fmt::format("nvidia/nccl/lib/libnccl.so.2,sha256=x,{}\n", *size);
    write(folder + "/RECORD", record);
}

// The wheel's library file in `site`; returns its size.
std::uint64_t install_nccl(const std::string& site, const std::string& library) {
    write(site + "/nvidia/nccl/lib/libnccl.so.2", library);
    return library.size();
}

e2e::Result run(const TempDir& dir, const std::string& site, std::map<std::string, std::string> env = {},
                std::vector<std::string> more = {}, const std::string& cwd = "") {
    std::vector<std::string> args = {PROVISION_BINARY, "--json", "--gpu-fixture", e2e::gpu_fixture("h100"),
                                     "--no-validate", "--env-file", dir.file("env"), "--site-packages", site};
    args.insert(args.end(), more.begin(), more.end());
    if (!env.count("PATH")) env["PATH"] = dir.file("no-bin");
    if (!env.count("HOME")) env["HOME"] = dir.file("no-home");
    e2e::RunOptions options;
    options.cwd = cwd;
    options.kill_after_s = kGuardSeconds;
    options.measure = true;
    auto result = e2e::run(args.front(), std::vector<std::string>(args.begin() + 1, args.end()), env, options);
    INFO("stderr: " << result.err.substr(0, 4000));
    CHECK_FALSE(result.killed_by_guard);
    return result;
}

nlohmann::json nccl_of(const e2e::Result& result) {
    INFO("stderr: " << result.err.substr(0, 4000));
    const auto report = e2e::report(result);
    REQUIRE(report.contains("nccl"));
    return report["nccl"];
}

// No control character but the newlines ending lines, and no line longer than `longest`.
void check_terminal_text(const std::string& text, std::size_t longest) {
    CHECK(std::none_of(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7F;
    }));
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        CHECK(end - start <= longest);
        start = end + 1;
    }
}

}  // namespace

TEST_CASE("nccl files: the library's build string is not scanned where its wheel's RECORD says what it is; where "
          "it is, 64 MiB of markers without a NUL are scanned once",
          "[nccl][readers]") {
    TempDir dir;
    const std::string site = torch_site(dir, TorchLink::rpath);
    std::string markers;
    while (markers.size() < (64u << 20) - 64) markers += "NCCL version ";
    const std::string library = nccl_library(markers);
    const std::uint64_t size = install_nccl(site, library);

    // The wheel's RECORD lists the file with its size: METADATA says which
    // version it is, and the 64 MiB are never read.
    nccl_dist_info(site, "nvidia_nccl_cu13", "2.28.3", size);
    const auto listed = run(dir, site);
    CHECK(listed.exit_code == 0);
    const auto nccl = nccl_of(listed);
    CHECK(nccl["version"] == "2.28.3");
    CHECK(nccl["cuda"] == "13");  // the wheel's name: nvidia-nccl-cu13
    CHECK(nccl["source"] == "wheel");
    CHECK(nccl["host_memory"] == "cumem");
    CHECK(listed.bytes_read < 8u << 20);

    // A RECORD whose size is not the file's: the file's own string decides,
    // read once (it has none: the version is unknown, not the wheel's).
    fs::remove_all(site + "/nvidia_nccl_cu13-x.dist-info");
    nccl_dist_info(site, "nvidia_nccl_cu13", "2.28.3", size + 1);
    const auto scanned = run(dir, site);
    CHECK(scanned.exit_code == 0);
    CHECK(nccl_of(scanned)["version"] == "");
    CHECK(scanned.bytes_read >= 64u << 20);
    CHECK(scanned.bytes_read < 3 * (64u << 20));
    e2e::check_memory_bound(scanned);
    reliability::record("nccl files", "a 64 MiB libnccl.so.2 whose .rodata is 'NCCL version ' again and again without "
                        "a NUL, listed by its wheel's RECORD, then with another size there",
                        "exit 0; listed: 2.28.3 from METADATA and the file never read (< 8 MiB read); not listed: "
                        "scanned once, linearly (64-192 MiB read), version unknown");
}

TEST_CASE("nccl files: two NCCL wheels in one site folder: the version of the file that is loaded", "[nccl]") {
    TempDir dir;
    const std::string site = torch_site(dir, TorchLink::rpath);
    const std::uint64_t size = install_nccl(site, nccl_library("junk" + build_string("2.28.3+cuda13.0")));
    SECTION("each RECORD says which wheel installed the file") {
        nccl_dist_info(site, "nvidia_nccl_cu12", "2.21.5", std::nullopt);
        nccl_dist_info(site, "nvidia_nccl_cu13", "2.28.3", size);
        const auto nccl = nccl_of(run(dir, site));
        CHECK(nccl["version"] == "2.28.3");
        CHECK(nccl["cuda"] == "13");
        CHECK(nccl["host_memory"] == "cumem");
    }
    SECTION("both RECORDs list it (one left behind): the file's own build string decides") {
        nccl_dist_info(site, "nvidia_nccl_cu12", "2.21.5", size - 1);
        nccl_dist_info(site, "nvidia_nccl_cu13", "2.28.3", size - 1);
        const auto result = run(dir, site, {}, {"--explain"});
        const auto nccl = nccl_of(result);
        CHECK(nccl["version"] == "2.28.3");
        CHECK(nccl["cuda"] == "13.0");
        CHECK(nccl["host_memory"] == "cumem");
        CHECK(has(result.err, "NCCL: 2.28.3 (wheel, built for CUDA 13.0"));
    }
    SECTION("no RECORD lists it: the build string, never the first wheel's METADATA") {
        nccl_dist_info(site, "nvidia_nccl_cu12", "2.21.5", std::nullopt);
        nccl_dist_info(site, "nvidia_nccl_cu13", "2.28.3", std::nullopt);
        const auto nccl = nccl_of(run(dir, site));
        CHECK(nccl["version"] == "2.28.3");
        CHECK(nccl["cuda"] == "13.0");
    }
    reliability::record("nccl files", "nvidia-nccl-cu12 2.21.5 and -cu13 2.28.3 in one site folder, the library "
                        "saying 2.28.3+cuda13.0",
                        "the version of the loaded file: the dist-info whose RECORD lists it, else its build "
                        "string (2.28.3, cuMem host memory judged by it); never 2.21.5");
}

TEST_CASE("nccl files: a version that does not read as one is unknown; the library's own string decides", "[nccl]") {
    TempDir dir;
    const std::string site = torch_site(dir, TorchLink::rpath);
    const std::uint64_t size = install_nccl(site, nccl_library(build_string("2.28.3+cuda13.0")));
    for (const char* version : {"abc", "999999999999999999999999.0.0", "99999999999.1.1"}) {
        INFO(version);
        fs::remove_all(site + "/nvidia_nccl_cu13-x.dist-info");
        nccl_dist_info(site, "nvidia_nccl_cu13", version, size);
        const auto result = run(dir, site, {}, {"--explain"});
        const auto nccl = nccl_of(result);
        CHECK(nccl["version"] == "2.28.3");
        CHECK(nccl["peer_path"] == "cumem-fd");
        CHECK_FALSE(has(result.err, "predates"));
    }
    // Without a build string, unknown: no rule that needs a number is taken.
    write(site + "/nvidia/nccl/lib/libnccl.so.2", nccl_library("no string here"));
    fs::remove_all(site + "/nvidia_nccl_cu13-x.dist-info");
    nccl_dist_info(site, "nvidia_nccl_cu13", "abc", std::nullopt);
    const auto unknown = run(dir, site, {}, {"--explain"});
    CHECK(nccl_of(unknown)["version"] == "");
    CHECK(has(unknown.err, "NCCL: version unknown"));
    CHECK_FALSE(has(unknown.err, "predates"));
    reliability::record("nccl files", "METADATA Version: abc, 999999999999999999999999.0.0, 99999999999.1.1 while "
                        "the library says 2.28.3",
                        "the library's 2.28.3 (cuMem), never 'predates cuMem'; without a build string the version "
                        "is unknown");
}

TEST_CASE("nccl files: an empty LD_LIBRARY_PATH entry is the current folder, as glibc reads it", "[nccl][loader]") {
    TempDir dir;
    const std::string site = torch_site(dir, TorchLink::neither);
    const std::string work = dir.file("work");
    write(work + "/libnccl.so.2", nccl_library(build_string("2.28.3+cuda13.0")));
    const std::string system = dir.file("system");
    write(system + "/libnccl.so.2", nccl_library(build_string("2.18.5+cuda12.2")));
    const auto result = run(dir, site, {{"LD_LIBRARY_PATH", dir.file("nothing") + ":"},
                                        {"PROVISION_TEST_SYSTEM_LIBRARIES", system}},
                            {"--explain"}, work);
    const auto nccl = nccl_of(result);
    CHECK(nccl["path"] == "./libnccl.so.2");
    CHECK(nccl["version"] == "2.28.3");
    CHECK(has(result.err, "LD_LIBRARY_PATH (an empty entry: the current folder)"));
    reliability::record("nccl files", "LD_LIBRARY_PATH=/opt/nothing: with libnccl.so.2 in the current folder and "
                        "another in the system's",
                        "./libnccl.so.2 (2.28.3), as glibc loads it; not the system's");
}

TEST_CASE("nccl files: torch's DT_RPATH comes before LD_LIBRARY_PATH, a DT_RUNPATH after it", "[nccl][loader]") {
    for (const TorchLink link : {TorchLink::rpath, TorchLink::runpath}) {
        TempDir dir;
        const std::string site = torch_site(dir, link);
        const std::uint64_t size = install_nccl(site, nccl_library(build_string("2.28.3+cuda13.0")));
        nccl_dist_info(site, "nvidia_nccl_cu13", "2.28.3", size);
        const std::string other = dir.file("other");
        write(other + "/libnccl.so.2", nccl_library(build_string("2.18.5+cuda12.2")));
        const auto nccl = nccl_of(run(dir, site, {{"LD_LIBRARY_PATH", other}}));
        if (link == TorchLink::rpath) {
            CHECK(nccl["path"] == site + "/nvidia/nccl/lib/libnccl.so.2");
            CHECK(nccl["version"] == "2.28.3");
            CHECK(nccl["peer_path"] == "cumem-fd");
        } else {
            CHECK(nccl["path"] == other + "/libnccl.so.2");
            CHECK(nccl["version"] == "2.18.5");
            CHECK(nccl["source"] == "system");
            CHECK(nccl["peer_path"] == "legacy-ipc");
        }
    }
    reliability::record("nccl files", "a libtorch_cuda.so linked with --enable-new-dtags (DT_RUNPATH) and "
                        "LD_LIBRARY_PATH naming another NCCL; the same with DT_RPATH",
                        "DT_RUNPATH: LD_LIBRARY_PATH's NCCL 2.18.5 (legacy IPC), as glibc loads it; DT_RPATH: the "
                        "wheel's 2.28.3");
}

TEST_CASE("nccl files: no value from METADATA or the environment drives the terminal or forges a line",
          "[nccl][messages]") {
    TempDir dir;
    const std::string site = torch_site(dir, TorchLink::rpath);
    const std::uint64_t size = install_nccl(site, nccl_library(build_string("2.28.3+cuda13.0")));
    const std::string hostile = "2.28.3\x1b[31m\x1b]0;title\x07" + std::string(900 * 1024, '9');
    nccl_dist_info(site, "nvidia_nccl_cu13", hostile, size);
    const std::string forged = "1\nprovision: error: forged\x1b[2J";
    const auto result = run(dir, site, {{"NCCL_CUMEM_ENABLE", forged}, {"NCCL_CUMEM_HOST_ENABLE", forged}},
                            {"--explain"});
    CHECK(result.exit_code == 0);
    check_terminal_text(result.err, 8192);
    CHECK_FALSE(has(result.err, "\nprovision: error: forged"));
    CHECK(has(result.err, "NCCL_CUMEM_ENABLE=1\\x0aprovision: error: forged\\x1b[2J turns cuMem on"));
    CHECK(nccl_of(result)["version"] == "2.28.3");

    const std::string long_value = std::string(120 * 1024, '7');
    for (const auto& [args, env] : std::vector<std::pair<std::vector<std::string>, std::map<std::string, std::string>>>{
             {{"--worker-processes", long_value}, {}},
             {{}, {{"PROVISION_WORKER_PROCESSES", "\x1b[31m" + long_value}}},
             {{"--validate", "\x1b[31mquick\x07"}, {}}}) {
        const auto refused = run(dir, site, env, args);
        CHECK(refused.exit_code == 2);
        check_terminal_text(refused.err, 1024);
        CHECK(refused.err.size() < 1024);
    }
    reliability::record("nccl files", "METADATA Version with ESC, OSC and BEL and 900 KB of digits; NCCL_CUMEM_ENABLE "
                        "and NCCL_CUMEM_HOST_ENABLE holding a newline and 'provision: error:'; a 120 KB "
                        "--worker-processes; ESC in --validate",
                        "every control character escaped, every line bounded, no forged line; refusals exit 2 "
                        "under 1 KB; the version the library's 2.28.3");
}
