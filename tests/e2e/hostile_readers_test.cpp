// The readers of what the workload installed (pyvenv.cfg, shebangs, pyenv
// files, dist-info WHEEL and RECORD, torch/version.py, ELF files, GNU and
// SysV hash tables, fatbinaries, compat folders), fed the trees a hostile or
// merely unusual user leaves: provision never hangs, stays within bounded
// work and memory (counted by the kernel: bytes read, peak RSS), never gives
// a wrong answer and never prints raw control characters.  Each case was
// shown failing on a binary from before its fix (docs/RELIABILITY.md, "Shown
// failing before their fixes").
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"
#include "support/synthetic_elf.h"

namespace {

namespace fs = std::filesystem;

const bool kSanitized = e2e::sanitized_build();

// A run that has not ended after this long is killed: a hang guard only.
constexpr double kGuardSeconds = 60;
// A FIFO blocks forever: a shorter guard tells it sooner.
constexpr double kFifoGuardSeconds = 20;

std::string test_data(const std::string& file) { return std::string(PROVISION_NATIVE_TEST_DATA) + "/" + file; }

void write(const std::string& path, const std::string& contents) {
    fs::create_directories(fs::path(path).parent_path());
    e2e::write_file(path, contents);
}

std::string executable(const std::string& path, const std::string& contents = "#!/bin/sh\nexit 0\n") {
    write(path, contents);
    ::chmod(path.c_str(), 0755);
    return path;
}

std::string fifo(const std::string& path) {
    fs::create_directories(fs::path(path).parent_path());
    REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    return path;
}

// A NAME-VERSION.dist-info with METADATA in `site`; returns the folder.
std::string dist_info(const std::string& site, const std::string& name, const std::string& version) {
    const std::string folder = fmt::format("{}/{}-{}.dist-info", site, name, version);
    write(folder + "/METADATA", fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
    return folder;
}

// A venv at `root` for Python 3.12 (pyvenv.cfg `config`) holding `dists`
// ("name==version"); returns its bin/python3.
std::string venv(const std::string& root, const std::vector<std::string>& dists,
                 const std::string& config = "home = /nonexistent/bin\ninclude-system-site-packages = false\n"
                                             "version = 3.12.3\n") {
    const std::string site = root + "/lib/python3.12/site-packages";
    fs::create_directories(site);
    for (const auto& dist : dists) {
        const auto split = dist.find("==");
        dist_info(site, dist.substr(0, split), dist.substr(split + 2));
    }
    write(root + "/pyvenv.cfg", config);
    return executable(root + "/bin/python3");
}

std::string site_of(const std::string& venv_root) { return venv_root + "/lib/python3.12/site-packages"; }

// provision --json on a simulated machine, with exactly `env` (PATH and
// HOME default to empty folders), under the hang guard and, outside
// sanitizer builds, a 2 GiB address-space limit so that a memory bomb ends
// in an allocation failure instead of the machine's OOM killer.
e2e::Result run_guarded(const e2e::TempDir& dir, std::vector<std::string> args, std::map<std::string, std::string> env = {},
                        const std::string& cwd = "", const std::string& fixture = "h100",
                        double guard_s = kGuardSeconds, const std::vector<std::string>& limits = {}) {
    std::vector<std::string> all = limits;
    if (!kSanitized) all.push_back("--as=" + std::to_string(2ull << 30));
    all.insert(all.end(), {"--", PROVISION_BINARY, "--json", "--gpu-fixture", e2e::gpu_fixture(fixture),
                           "--no-validate", "--env-file", dir.file("env")});
    all.insert(all.end(), args.begin(), args.end());
    if (!env.count("PATH")) env["PATH"] = dir.file("no-bin");
    if (!env.count("HOME")) env["HOME"] = dir.file("no-home");
    e2e::RunOptions options;
    options.cwd = cwd;
    options.kill_after_s = guard_s;
    options.measure = true;
    const e2e::Result result = e2e::run("prlimit", all, env, options);
    INFO("stderr: " << result.err.substr(0, 4000));
    CHECK_FALSE(result.killed_by_guard);
    return result;
}

nlohmann::json json_of(const e2e::Result& result) {
    INFO("stdout: " << result.out.substr(0, 2000) << "\nstderr: " << result.err.substr(0, 4000));
    nlohmann::json parsed;
    REQUIRE_NOTHROW(parsed = nlohmann::json::parse(result.out));
    return parsed;
}

bool has_finding(const nlohmann::json& report, const std::string& signal) {
    for (const auto& finding : report["findings"])
        if (finding["signal"] == signal) return true;
    return false;
}

using e2e::check_memory_bound;

// A torch venv for Python 3.12: torch `version` (CUDA 12.8) with its
// version.py, and flash_attn whose RECORD names `module_record` rows.
std::string torch_venv(const std::string& root, const std::string& version = "2.8.0+cu128") {
    const std::string python = venv(root, {"torch==" + version});
    write(site_of(root) + "/torch/version.py",
          fmt::format("__version__ = '{}'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n", version));
    fs::create_directories(site_of(root) + "/torch/lib");
    return python;
}

// flash_attn 2.8.3 in the venv, its RECORD listing `module` (relative to
// site-packages), a copy of `library` bytes.
void install_flash_attn(const std::string& root, const std::string& module, const std::string& library) {
    const std::string info = dist_info(site_of(root), "flash_attn", "2.8.3");
    write(info + "/RECORD", fmt::format("flash_attn/__init__.py,,\n{},sha256=x,1\n", module));
    write(site_of(root) + "/" + module, library);
}

}  // namespace

TEST_CASE("readers: a FIFO where a file is read never blocks: COMMAND, pyvenv.cfg, WHEEL, RECORD, version files",
          "[readers]") {
    e2e::TempDir dir;
    SECTION("the COMMAND itself") {
        const std::string command = fifo(dir.file("app"));
        const auto result = run_guarded(dir, {"--", command}, {}, "", "h100", kFifoGuardSeconds);
        CHECK(result.exit_code == 126);
        CHECK_THAT(result.err, Catch::Contains("cannot execute"));
        reliability::record("readers", "a FIFO as the COMMAND (provision -- T/fifo)",
                            "no wait: the #! line is not read from it; exit 126 'cannot execute'");
    }
    SECTION("a venv's pyvenv.cfg") {
        const std::string python = venv(dir.file("venv"), {"torch==2.11.0"});
        fs::remove(dir.file("venv/pyvenv.cfg"));
        fifo(dir.file("venv/pyvenv.cfg"));
        const auto result = run_guarded(dir, {"--python", python}, {}, "", "h100", kFifoGuardSeconds);
        CHECK(result.exit_code == 0);
        // site.py takes only a regular file for pyvenv.cfg: no venv, as CPython decides.
        CHECK(json_of(result)["python"]["environment"] != "venv");
        reliability::record("readers", "a FIFO named pyvenv.cfg (--python venv/bin/python3)",
                            "no wait; not a venv, as site.py decides (os.path.isfile)");
    }
    SECTION("a dist-info WHEEL, and a RECORD without a WHEEL") {
        const std::string python = venv(dir.file("venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
        const std::string info = site_of(dir.file("venv")) + "/flash_attn-2.8.3.dist-info";
        fifo(info + "/WHEEL");
        write(info + "/RECORD", "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,,\n");
        const auto with_wheel = run_guarded(dir, {"--python", python}, {}, "", "h100", kFifoGuardSeconds);
        CHECK(with_wheel.exit_code == 0);
        CHECK(json_of(with_wheel)["selected"]["mechanism"] == "flash2");
        fs::remove(info + "/WHEEL");
        fs::remove(info + "/RECORD");
        fifo(info + "/RECORD");
        const auto with_record = run_guarded(dir, {"--python", python, "--explain"}, {}, "", "h100", kFifoGuardSeconds);
        CHECK(with_record.exit_code == 0);
        const auto report = json_of(with_record);
        CHECK(report["selected"]["mechanism"] == "flash2");  // missing evidence is not a mismatch
        CHECK_THAT(with_record.err, Catch::Contains("is a FIFO, not a regular file"));
        reliability::record("readers", "a FIFO named WHEEL, or RECORD without a WHEEL, in a needed dist-info",
                            "no wait; the package counts unverified, --explain says the RECORD is a FIFO");
    }
    SECTION(".python-version in the working folder, and PYENV_ROOT/version, behind a pyenv shim") {
        const std::string root = dir.file("pyenv");
        executable(root + "/shims/python3", "#!/bin/sh\nexit 0\n");
        venv(root + "/versions/3.12.3", {"torch==2.11.0"});
        write(root + "/version", "3.12.3\n");
        fifo(dir.file("app/.python-version"));
        const auto local = run_guarded(dir, {}, {{"PATH", root + "/shims"}}, dir.file("app"), "h100", kFifoGuardSeconds);
        CHECK(local.exit_code == 0);
        // Not a regular file: pyenv's [ -f ] skips it and PYENV_ROOT/version decides.
        CHECK(json_of(local)["python"]["executable"] == root + "/versions/3.12.3/bin/python3");
        fs::remove(root + "/version");
        fifo(root + "/version");
        fs::create_directories(dir.file("elsewhere"));
        const auto global =
            run_guarded(dir, {}, {{"PATH", root + "/shims"}}, dir.file("elsewhere"), "h100", kFifoGuardSeconds);
        CHECK(global.exit_code == 0);
        CHECK(json_of(global)["python"]["executable"] == root + "/shims/python3");
        reliability::record("readers", "a FIFO named .python-version, or PYENV_ROOT/version, behind a pyenv shim",
                            "no wait; skipped as pyenv skips what is not a regular file");
    }
}

TEST_CASE("readers: a RECORD without a WHEEL is read in one pass: 2 MiB of '.cpython-' on one row", "[readers]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
    std::string record;
    while (record.size() < (2u << 20)) record += ".cpython-";
    record += "\nflash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so,,\n";
    write(site_of(dir.file("venv")) + "/flash_attn-2.8.3.dist-info/RECORD", record);
    const auto result = run_guarded(dir, {"--python", python}, {}, "", "h100", 30);
    CHECK(result.exit_code == 0);
    const auto report = json_of(result);
    // The one real row still decides: built for 3.10, so flash2 is rejected.
    CHECK(has_finding(report, "python_mismatch"));
    CHECK(report["selected"]["mechanism"] == "sdpa");
    reliability::record("readers", "a 2 MiB RECORD of '.cpython-' without a newline (no WHEEL)",
                        "read in one pass (was quadratic: 60 s); the real row still finds the Python mismatch");
}

TEST_CASE("readers: an ELF file whose 65,535 section names run into a 16 MiB table without an end", "[readers]") {
    e2e::TempDir dir;
    const std::string python = torch_venv(dir.file("venv"));
    write(site_of(dir.file("venv")) + "/torch/lib/libtorch_cuda.so",
          synthetic_elf::endless_section_names(65535, 16u << 20));
    const auto result = run_guarded(dir, {"--python", python});
    CHECK(result.exit_code == 0);
    json_of(result);
    check_memory_bound(result);
    reliability::record("readers", "a 20 MiB libtorch_cuda.so: 65,535 sections all named by one 16 MiB string "
                        "without an end",
                        "exit 0 with a report, peak RSS under 256 MiB (was std::bad_alloc, exit 1, 3.9 GB)");
}

TEST_CASE("readers: a GNU hash chain without an end is walked once, not once per symbol", "[readers]") {
    e2e::TempDir dir;
    const std::string python = torch_venv(dir.file("venv"));
    const std::string library = synthetic_elf::shared_library({{"_ZN3c105otherEv"}}, 1u << 20, true);
    write(site_of(dir.file("venv")) + "/torch/lib/libc10.so", library);
    // A library after it that answers: each symbol is asked of both.
    fs::copy_file(test_data("torch/lib/libc10.so"), site_of(dir.file("venv")) + "/torch/lib/libc10_cuda.so");
    std::vector<std::string> needed;
    for (int i = 0; i < 200; ++i) needed.push_back(fmt::format("_ZN3c104f{:03}Ev", i));
    install_flash_attn(dir.file("venv"), "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                       synthetic_elf::extension_needing(needed));
    const auto result = run_guarded(dir, {"--python", python, "--explain"}, {}, "", "a100");
    CHECK(result.exit_code == 0);
    const auto report = json_of(result);
    // The library cannot answer: the symbols are unknown, never missing.
    CHECK_FALSE(has_finding(report, "torch_abi_mismatch"));
    CHECK(report["selected"]["mechanism"] == "flash2");
    CHECK_THAT(result.err, Catch::Contains("torch symbols not checked") && Catch::Contains("hash chains longer than"));
    // The chain (4 MiB) is read about once, not 200 times.
    CHECK(result.bytes_read < 32u << 20);
    reliability::record("readers", "torch/lib/libc10.so with one GNU hash chain of 2^20 entries and no end bit, "
                        "a well-formed library beside it; an extension needing 200 c10:: symbols",
                        "under 32 MiB read in all, the 4 MiB chain about once (was 65.7 s); the symbols are unknown, "
                        "not missing, and --explain names the library");
}

TEST_CASE("readers: a fatbinary of 16-byte empty containers is read once, not 64 KiB per container", "[readers]") {
    e2e::TempDir dir;
    const std::string python = torch_venv(dir.file("venv"));
    const std::string fatbin = synthetic_elf::empty_fatbin_containers((8u << 20) / 16);
    const std::string library = synthetic_elf::build({{".nv_fatbin", SHT_PROGBITS, fatbin}});
    write(site_of(dir.file("venv")) + "/torch/lib/libtorch_cuda.so", library);
    const auto result = run_guarded(dir, {"--python", python});
    const auto report = json_of(result);
    REQUIRE(report["native"].size() >= 1);
    CHECK(report["native"][0]["package"] == "torch");
    CHECK(result.bytes_read < 3 * library.size());
    reliability::record("readers", "an 8 MiB .nv_fatbin of 16-byte empty containers in libtorch_cuda.so",
                        "under 3 times the file read in all (was 64 KiB per container: 32 GiB)");
}

TEST_CASE("readers: a RECORD naming one module 262,144 times reads it once; 350,000 missing modules are not "
          "listed",
          "[readers]") {
    e2e::TempDir dir;
    const std::string python = torch_venv(dir.file("venv"));
    const std::string info = dist_info(site_of(dir.file("venv")), "flash_attn", "2.8.3");
    write(site_of(dir.file("venv")) + "/a.so", e2e::read_file(test_data("extensions/extension_ok.so")));
    std::string record;
    while (record.size() < (4u << 20)) record += "a.so,sha256=x,1\n";
    write(info + "/RECORD", record);
    const auto repeated = run_guarded(dir, {"--python", python}, {}, "", "a100");
    CHECK(repeated.exit_code == 0);
    CHECK(json_of(repeated)["native"].size() == 2);
    CHECK(repeated.bytes_read < 32u << 20);
    check_memory_bound(repeated);

    record.clear();
    for (int i = 0; record.size() < (4u << 20); ++i) record += fmt::format("m{}.so,,\n", i);
    write(info + "/RECORD", record);
    const auto missing = run_guarded(dir, {"--python", python, "--explain"}, {}, "", "a100");
    CHECK(missing.exit_code == 0);
    CHECK(missing.err.size() < 64 * 1024);
    CHECK_THAT(missing.err, Catch::Contains("lists more than 4096 files ending in .so"));
    // 16 MiB of one-character rows: no row is kept, so the memory stays bounded.
    std::string rows;
    while (rows.size() < (16u << 20) - 2) rows += "a\n";
    write(info + "/RECORD", rows);
    const auto one_character = run_guarded(dir, {"--python", python}, {}, "", "a100");
    CHECK(one_character.exit_code == 0);
    check_memory_bound(one_character);

    reliability::record("readers", "a 4 MiB RECORD naming a.so 262,144 times; one naming 350,000 missing .so files "
                        "with --explain",
                        "a.so read once, under 32 MiB read in all (was 60 s and 897 MB); the missing ones: the "
                        "package unverified, under 64 KiB of output (was 141 MB)");
    reliability::record("readers", "a 16 MiB RECORD of one-character rows",
                        "peak RSS under 256 MiB: no row kept (was 284 MB)");
}

TEST_CASE("readers: a compat folder named 10,000 times in LD_LIBRARY_PATH is listed once", "[readers]") {
    e2e::TempDir dir;
    const std::string compat = dir.file("cuda/compat");
    fs::create_directories(compat);
    write(compat + "/file-0", "");
    for (int i = 1; i < 50000; ++i) fs::create_hard_link(compat + "/file-0", fmt::format("{}/file-{}", compat, i));
    std::string path;
    for (int i = 0; i < 10000; ++i) path += (i ? ":" : "") + std::string("cuda/compat");
    const auto result = run_guarded(dir, {"--site-packages", dir.file("none")}, {{"LD_LIBRARY_PATH", path}},
                                    dir.path());
    CHECK(result.exit_code == 0);
    CHECK_FALSE(has_finding(json_of(result), "cuda_compat_libs"));
    reliability::record("readers", "LD_LIBRARY_PATH naming cuda/compat (50,000 files, no libcuda) 10,000 times",
                        "the folder is listed once (was listed per repeat: 7 min 35 s for 100,000 files)");
}

TEST_CASE("readers: a path from the file system is never a glob pattern", "[readers]") {
    e2e::TempDir dir;
    // proj[1] is a venv without a version; proj1 beside it matches "proj[1]" as a pattern.
    const std::string python = executable(dir.file("proj[1]/bin/python3"));
    write(dir.file("proj[1]/pyvenv.cfg"), "home = /nonexistent/bin\ninclude-system-site-packages = false\n");
    for (const auto& dist : {std::pair{"torch", "2.11.0"}})
        dist_info(dir.file("proj[1]/lib/python3.12/site-packages"), dist.first, dist.second);
    for (const auto& dist : {std::pair{"torch", "2.6.0"}, {"triton", "3.2.0"}, {"sageattention", "2.2.0"}})
        dist_info(dir.file("proj1/lib/python3.11/site-packages"), dist.first, dist.second);
    const auto result = run_guarded(dir, {"--python", python});
    const auto report = json_of(result);
    CHECK(report["python"]["site_packages"] ==
          nlohmann::json::array({dir.file("proj[1]/lib/python3.12/site-packages")}));
    CHECK(report["selected"]["mechanism"] == "sdpa");
    reliability::record("readers", "a venv at proj[1] without a version, a proj1 beside it",
                        "its own lib/python3.12 is read literally; proj1's packages do not count");
}

TEST_CASE("readers: python3 -S has no site-packages, as CPython", "[readers]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
    const auto plain = run_guarded(dir, {"--", python, "app.py"});
    CHECK(json_of(plain)["selected"]["mechanism"] == "flash2");
    const auto no_site = run_guarded(dir, {"--", python, "-S", "app.py"});
    const auto report = json_of(no_site);
    CHECK(report["python"]["site_packages"] == nlohmann::json::array());
    CHECK(report["selected"]["mechanism"] == "eager");
    reliability::record("readers", "provision -- venv/bin/python3 -S app.py",
                        "no site-packages read, as sys.path under -S; eager (was flash2 from the venv)");
}

TEST_CASE("readers: a venv with the system's packages comes before the user site", "[readers]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("venv"), {"torch==2.5.0"},
                                    "home = /nonexistent/bin\ninclude-system-site-packages = true\nversion = 3.12.3\n");
    dist_info(dir.file("home/.local/lib/python3.12/site-packages"), "torch", "1.13.0");
    const auto result = run_guarded(dir, {"--python", python}, {{"HOME", dir.file("home")}});
    const auto report = json_of(result);
    CHECK(report["python"]["site_packages"] ==
          nlohmann::json::array({site_of(dir.file("venv")), dir.file("home/.local/lib/python3.12/site-packages")}));
    CHECK(report["selected"]["mechanism"] == "sdpa");  // torch 2.5.0 from the venv
    reliability::record("readers", "include-system-site-packages = true: torch 2.5.0 in the venv, 1.13.0 in the user site",
                        "the venv's counts, as CPython imports it; sdpa (was 1.13.0 and eager)");
}

TEST_CASE("readers: .python-version read as pyenv reads it", "[readers]") {
    e2e::TempDir dir;
    const std::string root = dir.file("pyenv");
    executable(root + "/shims/python3");
    venv(root + "/versions/3.12.3", {"torch==2.11.0"});
    venv(dir.file("evil"), {"torch==2.11.0", "flash_attn==2.8.3"});
    const std::map<std::string, std::string> env{{"PATH", root + "/shims"}};
    SECTION("a comment before the version") {
        write(dir.file("app/.python-version"), "# pinned for the app\n3.12.3\n");
        const auto report = json_of(run_guarded(dir, {}, env, dir.file("app")));
        CHECK(report["python"]["executable"] == root + "/versions/3.12.3/bin/python3");
        CHECK(report["selected"]["mechanism"] == "sdpa");
        reliability::record("readers", ".python-version with a # comment before 3.12.3",
                            "3.12.3 chosen, as pyenv chooses it (was the shim itself and eager)");
    }
    SECTION("a version that climbs out of PYENV_ROOT/versions") {
        write(dir.file("app/.python-version"), "../../evil\n");
        const auto result = run_guarded(dir, {}, env, dir.file("app"));
        const auto report = json_of(result);
        CHECK(report["python"]["executable"] == root + "/shims/python3");
        CHECK(report["selected"]["mechanism"] != "flash2");
        CHECK_THAT(result.err, Catch::Contains("which pyenv refuses"));
        reliability::record("readers", ".python-version saying ../../evil",
                            "refused as pyenv refuses it (CVE-2022-35861), with a note; evil's packages unread");
    }
}

TEST_CASE("readers: a relative interpreter path finds its venv", "[readers]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
    dist_info(dir.file("home/.local/lib/python3.9/site-packages"), "xformers", "0.0.28");
    SECTION("--python ./python3") {
        const auto result = run_guarded(dir, {"--python", "./python3"}, {{"HOME", dir.file("home")}},
                                        dir.file("venv/bin"));
        const auto report = json_of(result);
        CHECK(report["python"]["executable"] == python);
        CHECK(report["python"]["environment"] == "venv");
        CHECK(report["python"]["version"] == "3.12");
        CHECK(report["python"]["site_packages"] == nlohmann::json::array({site_of(dir.file("venv"))}));
        reliability::record("readers", "cd venv/bin; provision --python ./python3",
                            "the venv, 3.12, its own site-packages (was 'system', version '', ~/.local 3.9 read)");
    }
    SECTION("an empty PATH entry") {
        const auto result = run_guarded(dir, {"--", "python3", "app.py"},
                                        {{"HOME", dir.file("home")}, {"PATH", ":" + dir.file("no-bin")}},
                                        dir.file("venv/bin"));
        const auto report = json_of(result);
        CHECK(report["python"]["executable"] == python);
        CHECK(report["python"]["environment"] == "venv");
    }
}

TEST_CASE("readers: a torch library that cannot answer never makes a symbol 'missing'", "[readers]") {
    e2e::TempDir dir;
    const std::string python = torch_venv(dir.file("venv"));
    const std::string lib = site_of(dir.file("venv")) + "/torch/lib";
    install_flash_attn(dir.file("venv"), "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                       e2e::read_file(test_data("extensions/extension_ok.so")));
    const std::string unrelated = synthetic_elf::shared_library({{"_ZN3c105otherEv"}});
    SECTION("the symbol is in a library with only a SysV hash table") {
        write(lib + "/libc10.so", unrelated);
        fs::copy_file(test_data("sysv/libc10_sysv_hash.so"), lib + "/libtorch_cpu.so");
        const auto result = run_guarded(dir, {"--python", python}, {}, "", "a100");
        const auto report = json_of(result);
        CHECK_FALSE(has_finding(report, "torch_abi_mismatch"));
        CHECK(report["selected"]["mechanism"] == "flash2");
        reliability::record("readers", "torch/lib/libtorch_cpu.so exports the symbol through a SysV .hash only",
                            "found through the SysV table: flash2 accepted (was a false torch_abi_mismatch)");
    }
    SECTION("1,100 libraries under RLIMIT_NOFILE=1024") {
        write(lib + "/lib0000.so", unrelated);
        for (int i = 1; i < 1099; ++i) fs::create_hard_link(lib + "/lib0000.so", fmt::format("{}/lib{:04}.so", lib, i));
        fs::copy_file(test_data("torch/lib/libc10.so"), lib + "/libzz_c10.so");  // read last
        const auto result = run_guarded(dir, {"--python", python}, {}, "", "a100", kGuardSeconds, {"--nofile=1024:1024"});
        const auto report = json_of(result);
        CHECK_FALSE(has_finding(report, "torch_abi_mismatch"));
        CHECK(report["selected"]["mechanism"] == "flash2");
        reliability::record("readers", "1,100 libraries in torch/lib under RLIMIT_NOFILE=1024, the symbol in the last",
                            "one library open at a time: found, flash2 accepted (was a false torch_abi_mismatch)");
    }
    SECTION("a library that cannot be read makes the check unverified, and --explain names it") {
        write(lib + "/libc10.so", unrelated);
        write(lib + "/libtorch_cpu.so", "INPUT(-ltorch_cpu_real)\n");  // not an ELF file
        const auto result = run_guarded(dir, {"--python", python, "--explain"}, {}, "", "a100");
        const auto report = json_of(result);
        CHECK_FALSE(has_finding(report, "torch_abi_mismatch"));
        CHECK_THAT(result.err, Catch::Contains("torch symbols not checked") &&
                                   Catch::Contains("libtorch_cpu.so: not an ELF file"));
    }
}

TEST_CASE("readers: control characters from paths, versions and values are escaped; echoed values cut",
          "[readers]") {
    e2e::TempDir dir;
    const std::string venv_root = dir.file("ve\x1b[2Jnv");
    const std::string python = torch_venv(venv_root, "2.5.0\x1b[2J");
    const std::string red = dir.file("pp\x1b[31mred");
    const std::string forged = dir.file("pp\nprovision: forged line");
    const std::string ctrl = dir.file("pp\x01" "x");
    for (const auto& folder : {red, forged, ctrl}) fs::create_directories(folder);
    const auto result = run_guarded(dir, {"--python", python, "--explain"},
                                    {{"PYTHONPATH", red + ":" + forged + ":" + ctrl}});
    CHECK(result.err.find('\x1b') == std::string::npos);
    CHECK(result.err.find('\x01') == std::string::npos);
    CHECK(result.err.find("\nprovision: forged") == std::string::npos);
    CHECK_THAT(result.err, Catch::Contains("pp\\x1b[31mred") && Catch::Contains("Compiled code of torch 2.5.0\\x1b[2J"));

    const std::string hostile = "/x/\x1b[2J\nprovision: fake line " + std::string(200, 'y');
    for (const auto& [args, env] :
         std::vector<std::pair<std::vector<std::string>, std::map<std::string, std::string>>>{
             {{"--python", hostile}, {}}, {{}, {{"PROVISION_PYTHON", hostile}}}, {{"--workload", hostile}, {}}}) {
        const auto refused = run_guarded(dir, args, env);
        CHECK(refused.exit_code == 2);
        CHECK(refused.err.find('\x1b') == std::string::npos);
        CHECK(refused.err.find("\nprovision: fake") == std::string::npos);
        CHECK_THAT(refused.err, Catch::Contains("bytes in all"));
        CHECK(refused.err.size() < 1024);
    }
    reliability::record("readers", "ESC, \\x01 and newlines in PYTHONPATH folders, a venv path and torch's "
                        "__version__; --python, PROVISION_PYTHON and --workload holding ESC[2J and a newline",
                        "escaped as \\xNN everywhere; the echoed values cut to 64 bytes with their size");
}

TEST_CASE("readers: an allocation that fails still gives the JSON error document and exit 1", "[readers]") {
    if (kSanitized) {
        WARN("skipped: a sanitizer's allocator does not run under an RLIMIT_DATA this small");
        return;
    }
    e2e::TempDir dir;
    const std::string python = venv(dir.file("venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
    // A 16 MiB RECORD (the largest read) with 12 MiB of data segment to hold it.
    std::string record;
    while (record.size() < (16u << 20) - 64) record += "flash_attn/module.py,sha256=x,1\n";
    write(site_of(dir.file("venv")) + "/flash_attn-2.8.3.dist-info/RECORD", record);
    // An earlier run's labels: a run that cannot finish must not leave them.
    write(dir.file("labels"), "provision/validated=true\n");
    const auto result = run_guarded(dir, {"--python", python, "--node-labels", dir.file("labels")}, {}, "", "h100",
                                    kGuardSeconds, {"--data=12582912"});
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.err, Catch::Contains("provision: internal error:"));
    const auto report = json_of(result);
    CHECK(report["error"]["exit_code"] == 1);
    CHECK_THAT(report["error"]["message"].get<std::string>(), Catch::Contains("internal error"));
    const std::string labels = e2e::read_file(dir.file("labels"));
    CHECK_THAT(labels, Catch::Contains("\nprovision/validated=false\n"));
    CHECK_THAT(labels, Catch::Contains("\nprovision/error=internal\n"));
    reliability::record("readers", "an allocation fails (RLIMIT_DATA 12 MiB, a 16 MiB RECORD to read) with --json",
                        "exit 1 'internal error', the JSON error document on stdout; the labels say "
                        "validated=false, error=internal");
}

TEST_CASE("readers: an ld.so.conf.d file over the limit is named in a note, not skipped in silence", "[readers]") {
    if (::geteuid() != 0) {
        WARN("skipped: mounting a folder over /etc/ld.so.conf.d in a private mount namespace needs root");
        return;
    }
    e2e::TempDir dir;
    const std::string conf = dir.file("ld.so.conf.d");
    write(conf + "/cuda-compat.conf", "# " + std::string(1024 * 1024, 'x') + "\n/usr/local/cuda-12.8/compat\n");
    // The real /etc/ld.so.conf.d is never touched: a private mount namespace
    // puts the test's folder there for this one run.
    const auto result = e2e::run(
        "unshare", {"--mount", "--propagation", "private", "sh", "-c",
                    "mount --bind \"$0\" /etc/ld.so.conf.d && exec \"$@\"", conf, PROVISION_BINARY, "--json",
                    "--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--env-file", dir.file("env"),
                    "--site-packages", dir.file("none")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.err, Catch::Contains("/etc/ld.so.conf.d/cuda-compat.conf is not read for CUDA compat folders: "
                                           "larger than the limit of 1048576 bytes"));
    reliability::record("readers", "an /etc/ld.so.conf.d/*.conf over 1 MiB (private mount namespace)",
                        "a note names it and the limit (was skipped without a note over 64 KiB)");
}
