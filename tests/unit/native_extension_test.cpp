// The readers behind the extension checks: RECORD's module list, torch's
// namespaces in mangled names, torch/lib's exports, and an extension's
// modules read together.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "native/cuda_compat.h"
#include "native/extension_files.h"
#include "native/torch_symbols.h"
#include "native_test_data.h"
#include "packages/installed_files.h"

using namespace provision;
using native_test::data_path;

namespace {

namespace fs = std::filesystem;

void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("RECORD rows: the path field, quoted or not", "[native][extension]") {
    CHECK(parse_record("a/b.py,sha256=x,10\r\n\"c,d.so\",,\n\"e\"\"f.so\",,\nlast.so,,") ==
          std::vector<std::string>{"a/b.py", "c,d.so", "e\"f.so", "last.so"});
    CHECK(parse_record("").empty());
}

TEST_CASE("the compiled modules RECORD lists, inside the package's folder only", "[native][extension]") {
    const fs::path root = fs::temp_directory_path() / ("provision-record-" + std::to_string(::getpid()));
    const std::string dist_info = (root / "flash_attn-2.8.3.dist-info").string();
    write(dist_info + "/RECORD",
          "flash_attn/__init__.py,,\n"
          "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,sha256=x,1\n"
          "flash_attn.libs/libcudart-1a2b.so.12,,\n"
          "../../../bin/evil.so,,\n"
          "/abs/elsewhere.so,,\n"
          "flash_attn/solib.py,,\n");
    std::string error;
    const auto files = installed_files_ending(dist_info, ".so", error);
    REQUIRE(files);
    CHECK(*files == std::vector<std::string>{root.string() + "/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                                             root.string() + "/flash_attn.libs/libcudart-1a2b.so.12"});
    CHECK_FALSE(installed_files_ending((root / "missing.dist-info").string(), ".so", error));
    CHECK(error.find("No such file") != std::string::npos);
    fs::remove_all(root);
}

TEST_CASE("torch's namespaces in mangled names", "[native][extension]") {
    CHECK(native::in_torch_namespace("_ZN3c104cuda9SetDeviceEi"));
    CHECK(native::in_torch_namespace("_ZNK2at10TensorBase5dtypeEv"));
    CHECK(native::in_torch_namespace("_ZN5torch8autograd12VariableInfoC1Ev"));
    CHECK(native::in_torch_namespace("_ZTVN3c1011StorageImplE"));  // a vtable
    CHECK(native::in_torch_namespace("_ZTIN2at5ErrorE"));          // typeinfo
    CHECK_FALSE(native::in_torch_namespace("_ZN3c1"));              // cut short
    CHECK_FALSE(native::in_torch_namespace("_ZNSt6vectorIiSaIiEE9push_backEi"));
    CHECK_FALSE(native::in_torch_namespace("_ZN4c10x3fooEv"));       // "c10x", not c10
    CHECK_FALSE(native::in_torch_namespace("_ZN6torchx3fooEv"));
    CHECK_FALSE(native::in_torch_namespace("cudaMalloc"));
    CHECK_FALSE(native::in_torch_namespace("_Z3fooi"));             // not nested
}

TEST_CASE("torch/lib's exports answer through the GNU hash tables, else the SysV ones", "[native][extension]") {
    native::TorchExports exports(data_path("torch/lib"));
    CHECK(exports.exports("_ZN3c104cuda9SetDeviceEi") == std::optional<bool>(true));
    CHECK(exports.exports("_ZN3c104cuda14ExchangeDeviceEi") == std::optional<bool>(false));
    CHECK(exports.exports("_ZN3c1013hidden_helperEv") == std::optional<bool>(false));  // hidden: not exported

    native::TorchExports sysv_only(data_path("sysv"));  // only a SysV hash table: it answers too
    CHECK(sysv_only.exports("_ZN3c104cuda9SetDeviceEi") == std::optional<bool>(true));
    CHECK(sysv_only.exports("_ZN3c104cuda14ExchangeDeviceEi") == std::optional<bool>(false));
    CHECK(sysv_only.notes().empty());

    native::TorchExports missing(data_path("no-such-folder"));
    CHECK_FALSE(missing.exports("_ZN3c104cuda9SetDeviceEi").has_value());
    CHECK(missing.notes().size() == 1);
}

TEST_CASE("a library that cannot answer makes the others' 'no' unknown, and is named", "[native][extension]") {
    test_support::TempDir dir;
    fs::copy_file(data_path("torch/lib/libc10.so"), dir.file("libc10.so"));
    write(dir.file("libtorch_cpu.so"), "not an ELF file at all");
    native::TorchExports exports(dir.path());
    const auto answers = exports.look_up({"_ZN3c104cuda9SetDeviceEi", "_ZN3c104cuda14ExchangeDeviceEi"});
    CHECK(answers == std::vector<native::ExportAnswer>{native::ExportAnswer::exported, native::ExportAnswer::unknown});
    REQUIRE(exports.notes().size() == 1);
    CHECK_THAT(exports.notes()[0], Catch::Contains("libtorch_cpu.so") && Catch::Contains("not an ELF file"));
    // Asked again, the library is not read again and the answers stay.
    CHECK(exports.look_up({"_ZN3c104cuda14ExchangeDeviceEi"}) ==
          std::vector<native::ExportAnswer>{native::ExportAnswer::unknown});
    CHECK(exports.notes().size() == 1);
}

TEST_CASE("torch/lib is read one library at a time: more libraries than RLIMIT_NOFILE allows open", "[native][extension]") {
    test_support::TempDir dir;
    constexpr int kLibraries = 300;
    for (int i = 0; i < kLibraries; ++i)
        fs::copy_file(data_path("extensions/extension_ok.so"), dir.file(fmt::format("libpart{:03}.so", i)));
    fs::copy_file(data_path("torch/lib/libc10.so"), dir.file("libzz_c10.so"));  // the last one holds the symbol
    rlimit saved{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
    rlimit low = saved;
    // A few more than are open now: far fewer than the libraries.
    const auto open_now = static_cast<rlim_t>(std::distance(fs::directory_iterator("/proc/self/fd"), {}));
    low.rlim_cur = open_now + 16;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    native::TorchExports exports(dir.path());
    const auto answers = exports.look_up({"_ZN3c104cuda9SetDeviceEi", "_ZN3c104cuda14ExchangeDeviceEi"});
    ::setrlimit(RLIMIT_NOFILE, &saved);
    CHECK(answers == std::vector<native::ExportAnswer>{native::ExportAnswer::exported, native::ExportAnswer::missing});
    CHECK(exports.notes().empty());
}

TEST_CASE("an extension's torch symbols: undefined, not weak, each once", "[native][extension]") {
    const auto files = native::read_extension_files(
        {data_path("extensions/extension_missing.so"), data_path("extensions/extension_ok.so")});
    CHECK(files.modules.size() == 2);
    std::vector<std::string> names;
    for (const auto& symbol : files.torch_symbols) names.push_back(symbol.name);
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"_ZN3c104cuda14ExchangeDeviceEi", "_ZN3c104cuda9SetDeviceEi"});
    CHECK(files.device_code.containers == 0);  // host code only
    CHECK(files.notes.empty());
}

TEST_CASE("an extension's modules that are not ELF files are skipped; unreadable ones noted", "[native][extension]") {
    const fs::path root = fs::temp_directory_path() / ("provision-ext-" + std::to_string(::getpid()));
    write((root / "text.so").string(), "not an ELF file");
    const auto files = native::read_extension_files({(root / "text.so").string(), (root / "missing.so").string()});
    CHECK(files.modules.empty());
    REQUIRE(files.notes.size() == 1);
    CHECK(files.notes[0].find("missing.so") != std::string::npos);
    fs::remove_all(root);
}

TEST_CASE("an extension's modules: device code per module and in total", "[native][extension]") {
    if (!native_test::have_cuda_data) {
        WARN("skipped: no nvcc to build the test libraries");
        return;
    }
    const auto files =
        native::read_extension_files({data_path("cuda/libtorch_cuda.so"), data_path("cuda/libvariants.so")});
    CHECK(files.device_code.containers == 5);  // 4 units + 1
    REQUIRE(files.module_code.size() == 2);
    CHECK(files.module_code[1].code.containers == 1);
    CHECK(files.device_code.containers_with.at({native::CodeKind::sass, 90, native::ArchVariant::plain}) == 3);
    CHECK(files.device_code.containers_with.at({native::CodeKind::sass, 120, native::ArchVariant::arch_specific}) ==
          1);
}

TEST_CASE("CUDA compat folders by name", "[native][compat]") {
    CHECK(native::is_cuda_compat_folder("/usr/local/cuda-12.8/compat"));
    CHECK(native::is_cuda_compat_folder("/usr/local/cuda/compat/"));
    CHECK(native::is_cuda_compat_folder("/opt/cuda-13.0/./compat"));
    CHECK_FALSE(native::is_cuda_compat_folder("/usr/local/cuda-12.8/lib64"));
    CHECK_FALSE(native::is_cuda_compat_folder("/opt/app/compat"));
    CHECK_FALSE(native::is_cuda_compat_folder("compat"));
    CHECK_FALSE(native::is_cuda_compat_folder(""));
}

TEST_CASE("compat libraries from LD_LIBRARY_PATH and ld.so.conf.d", "[native][compat]") {
    const fs::path root = fs::temp_directory_path() / ("provision-compat-" + std::to_string(::getpid()));
    const std::string by_path = (root / "cuda-12.9/compat").string();
    const std::string by_conf = (root / "cuda-13.0/compat").string();
    write(by_path + "/libcuda.so.575.51.03", "");
    write(by_conf + "/libcuda.so.1", "");
    write(by_conf + "/libcuda.so.580.65.06", "");
    write((root / "cuda-13.0/empty/compat/readme").string(), "");
    const std::string conf = (root / "ld.so.conf.d").string();
    write(conf + "/cuda-compat.conf", "# forward compatibility\n" + by_conf + "  # for the workload\ninclude x\n");
    write(conf + "/other.txt", by_path + "\n");  // not a .conf file
    const auto scan = native::find_cuda_compat_libraries(
        "/usr/lib:" + by_path + "::" + (root / "cuda-13.0/empty/compat").string(), conf);
    const auto& found = scan.found;
    CHECK(scan.notes.empty());
    REQUIRE(found.size() == 2);
    CHECK(found[0].folder == by_path);
    CHECK(found[0].named_by == "LD_LIBRARY_PATH");
    CHECK(found[0].libcuda_version == "575.51.03");
    CHECK(found[1].folder == by_conf);
    CHECK(found[1].named_by == conf + "/cuda-compat.conf");
    CHECK(found[1].libcuda_version == "580.65.06");
    CHECK(native::find_cuda_compat_libraries("", (root / "missing").string()).found.empty());

    // A configuration file past 1 MiB is not read, and a note says so.
    write(conf + "/huge.conf", "# " + std::string(1024 * 1024, 'x') + "\n" + by_path + "\n");
    const auto with_huge = native::find_cuda_compat_libraries("", conf);
    REQUIRE(with_huge.notes.size() == 1);
    CHECK_THAT(with_huge.notes[0], Catch::Contains(conf + "/huge.conf") && Catch::Contains("larger than the limit"));
    fs::remove_all(root);
}
