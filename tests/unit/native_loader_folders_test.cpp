// The loader's folders in glibc's order (native/loader_folders.h) and the
// search paths an ELF file carries (DT_RPATH, DT_RUNPATH), read from
// libraries the host linker made (tests/native) and from synthetic ones.
#include <elf.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "native/elf_file.h"
#include "native/loader_folders.h"
#include "native_test_data.h"
#include "support/synthetic_elf.h"

using namespace provision::native;
using native_test::data_path;
using native_test::in_memory;

namespace {

std::vector<std::string> folders_of(const LoaderSearch& search) {
    std::vector<std::string> folders;
    for (const auto& found : loader_folders(search).folders) folders.push_back(found.folder);
    return folders;
}

LoaderSearch search_with(const std::string& ld_library_path, std::optional<std::string> rpath = std::nullopt,
                    std::optional<std::string> runpath = std::nullopt) {
    LoaderSearch search{.ld_library_path = ld_library_path,
                        .ld_so_conf_dir = "",
                        .default_folders = {"/usr/lib"},
                        .needed_by = std::nullopt};
    if (rpath || runpath)
        search.needed_by = NeedingObject{.path = "/site/torch/lib/libtorch_cuda.so",
                                         .origin = "/site/torch/lib",
                                         .rpath = rpath,
                                         .runpath = runpath};
    return search;
}

// A library of synthetic sections with a dynamic section holding `tags`
// (each a tag and a string of the dynamic string table; each string's
// offset `offset` instead, when given).
std::string library_with(const std::vector<std::pair<std::int64_t, std::string>>& tags,
                         std::optional<std::uint64_t> offset = std::nullopt) {
    std::string strings(1, '\0');
    std::string dynamic;
    for (const auto& [tag, text] : tags) {
        Elf64_Dyn entry{};
        entry.d_tag = tag;
        entry.d_un.d_val = offset ? *offset : strings.size();
        strings += text;
        strings += '\0';
        synthetic_elf::append(dynamic, entry);
    }
    synthetic_elf::append(dynamic, Elf64_Dyn{});  // DT_NULL
    return synthetic_elf::build({{.name = ".dynstr", .type = SHT_STRTAB, .bytes = strings, .link = 0, .entry_size = 0},
                                 {.name = ".dynamic", .type = SHT_DYNAMIC, .bytes = dynamic, .link = 1,
                                  .entry_size = sizeof(Elf64_Dyn)}});
}

}  // namespace

TEST_CASE("loader folders: an empty entry of LD_LIBRARY_PATH is the current folder, as glibc reads it",
          "[native][loader]") {
    CHECK(folders_of(search_with("/opt/nothing:")) == std::vector<std::string>{"/opt/nothing", ".", "/usr/lib"});
    CHECK(folders_of(search_with(":/opt/a")) == std::vector<std::string>{".", "/opt/a", "/usr/lib"});
    CHECK(folders_of(search_with("/opt/a::/opt/b")) == std::vector<std::string>{"/opt/a", ".", "/opt/b", "/usr/lib"});
    CHECK(folders_of(search_with("/opt/a;/opt/b")) == std::vector<std::string>{"/opt/a", "/opt/b", "/usr/lib"});  // ';' too
    CHECK(folders_of(search_with("")) == std::vector<std::string>{"/usr/lib"});  // unset or empty: none
    CHECK(folders_of(search_with("/opt/a/")) == std::vector<std::string>{"/opt/a", "/usr/lib"});
    // $ORIGIN in LD_LIBRARY_PATH is the program's folder, which is not read.
    CHECK(folders_of(search_with("$ORIGIN/lib:/opt/a")) == std::vector<std::string>{"/opt/a", "/usr/lib"});
}

TEST_CASE("loader folders: DT_RPATH before LD_LIBRARY_PATH, DT_RUNPATH after it, DT_RPATH ignored beside DT_RUNPATH",
          "[native][loader]") {
    const std::string wheel = "/site/torch/lib/../../nvidia/nccl/lib";
    CHECK(folders_of(search_with("/env", "$ORIGIN/../../nvidia/nccl/lib:$ORIGIN")) ==
          std::vector<std::string>{wheel, "/site/torch/lib", "/env", "/usr/lib"});
    CHECK(folders_of(search_with("/env", std::nullopt, "${ORIGIN}/../../nvidia/nccl/lib")) ==
          std::vector<std::string>{"/env", wheel, "/usr/lib"});
    CHECK(folders_of(search_with("/env", "/rpath", "/runpath")) == std::vector<std::string>{"/env", "/runpath", "/usr/lib"});
    // $LIB and $PLATFORM are the machine's: left out.  $ORIGINAL is no token.
    CHECK(folders_of(search_with("", "/opt/$LIB:/opt/$PLATFORM/x:/opt/$ORIGINAL")) ==
          std::vector<std::string>{"/opt/$ORIGINAL", "/usr/lib"});
    CHECK(folders_of(search_with("", "/opt/a::/opt/b")) == std::vector<std::string>{"/opt/a", ".", "/opt/b", "/usr/lib"});
    const auto found = loader_folders(search_with("/env", "/rpath", std::nullopt)).folders;
    REQUIRE(found.size() == 3);
    CHECK(found[0].named_by == "DT_RPATH of /site/torch/lib/libtorch_cuda.so");
    CHECK(found[1].named_by == "LD_LIBRARY_PATH");
}

TEST_CASE("ELF search paths: DT_RPATH and DT_RUNPATH as the host linker writes them", "[native][loader]") {
    const auto rpath = ElfFile::open(data_path("torch_rpath/torch_cuda_rpath.so"));
    REQUIRE(rpath.ok());
    const auto rpath_paths = rpath->library_search_paths();
    REQUIRE(rpath_paths.ok());
    CHECK(rpath_paths->rpath == std::optional<std::string>("$ORIGIN/../../nvidia/nccl/lib:$ORIGIN"));
    CHECK_FALSE(rpath_paths->runpath);

    const auto runpath = ElfFile::open(data_path("torch_runpath/torch_cuda_runpath.so"));
    REQUIRE(runpath.ok());
    const auto runpath_paths = runpath->library_search_paths();
    REQUIRE(runpath_paths.ok());
    CHECK(runpath_paths->runpath == std::optional<std::string>("$ORIGIN/../../nvidia/nccl/lib:$ORIGIN"));
    CHECK_FALSE(runpath_paths->rpath);

    const auto neither = ElfFile::open(data_path("torch/lib/libc10.so"));
    REQUIRE(neither.ok());
    CHECK_FALSE(neither->library_search_paths()->rpath);
    CHECK_FALSE(neither->library_search_paths()->runpath);
}

TEST_CASE("ELF search paths: from the dynamic section of a file without program headers, bounded", "[native][loader]") {
    const auto both = ElfFile::parse(in_memory(library_with({{DT_RPATH, "/r"}, {DT_RUNPATH, "/run:$ORIGIN"}})));
    REQUIRE(both.ok());
    CHECK(both->library_search_paths()->rpath == std::optional<std::string>("/r"));
    CHECK(both->library_search_paths()->runpath == std::optional<std::string>("/run:$ORIGIN"));

    // A string without an end within 64 KiB is an error, not a read to the end.
    const auto long_one = ElfFile::parse(in_memory(library_with({{DT_RUNPATH, std::string(100 * 1024, 'x')}})));
    REQUIRE(long_one.ok());
    CHECK_FALSE(long_one->library_search_paths().ok());

    // An offset past the string table.
    const auto outside = ElfFile::parse(in_memory(library_with({{DT_RPATH, "/r"}}, std::uint64_t{1} << 30)));
    REQUIRE(outside.ok());
    CHECK_FALSE(outside->library_search_paths().ok());
}
