// The one atomic file writer and the one dlopen symbol table: the options
// their callers differ by (tests/unit/env_file_test.cpp covers the env
// file's guarantees through them).
#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include <catch2/catch.hpp>

#include "core/atomic_file.h"
#include "core/shared_library.h"
#include "test_support.h"

using namespace provision;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

namespace {

int entries(const std::string& folder) {
    int count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++count;
    return count;
}

mode_t mode_of(const std::string& path) {
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    return info.st_mode & 07777;
}

}  // namespace

TEST_CASE("write_file_atomically: the mode asked for, a refusal naming what is in the way") {
    TempDir dir;
    const std::string path = dir.file("private");
    REQUIRE_FALSE(write_file_atomically(path, "one", {.mode = 0600}));
    CHECK(read_file(path) == "one");
    CHECK(mode_of(path) == 0600);

    std::filesystem::create_directory(dir.file("folder"));
    const auto refused = write_file_atomically(dir.file("folder"), "x");
    REQUIRE(refused);
    CHECK(refused->refused());
    CHECK(refused->message() == "it is a folder, not a regular file");
    CHECK(entries(dir.path()) == 2);  // no temporary file left
}

TEST_CASE("write_file_atomically: a symbolic link is replaced, never followed, when the folder is the writer's") {
    TempDir dir;
    write_file(dir.file("victim"), "precious");
    std::filesystem::create_symlink(dir.file("victim"), dir.file("entry"));
    const auto refused = write_file_atomically(dir.file("entry"), "new");
    REQUIRE(refused);
    CHECK(refused->message() == "it is a symbolic link to " + dir.file("victim") + ", not a regular file");

    REQUIRE_FALSE(write_file_atomically(dir.file("entry"), "new", {.mode = 0600, .only_replace_regular_file = false}));
    CHECK_FALSE(std::filesystem::is_symlink(dir.file("entry")));
    CHECK(read_file(dir.file("entry")) == "new");
    CHECK(read_file(dir.file("victim")) == "precious");
}

TEST_CASE("write_file_atomically without replace: a new file, never over an existing one") {
    TempDir dir;
    const std::string path = dir.file("recipe.toml");
    REQUIRE_FALSE(write_file_atomically(path, "first", {.replace = false}));
    CHECK(mode_of(path) == 0644);
    const auto failure = write_file_atomically(path, "second", {.replace = false});
    REQUIRE(failure);
    CHECK(failure->error == EEXIST);
    CHECK(failure->message() == std::string("link failed: ") + std::strerror(EEXIST));
    CHECK(read_file(path) == "first");
    CHECK(entries(dir.path()) == 1);
}

TEST_CASE("write_temporary_file: the name chosen, kept for the caller; a failure names the folder") {
    TempDir dir;
    std::string path = dir.file("body-XXXXXX.toml");
    REQUIRE_FALSE(write_temporary_file(path, 5, "body", 0600));
    CHECK(path != dir.file("body-XXXXXX.toml"));
    CHECK(path.ends_with(".toml"));
    CHECK(read_file(path) == "body");
    CHECK(mode_of(path) == 0600);

    std::string missing = dir.file("no/such/XXXXXX");
    const auto failure = write_temporary_file(missing, 0, "x", 0600);
    REQUIRE(failure);
    CHECK(failure->message() == "cannot create a temporary file in " + dir.file("no/such") + ": " +
                                    std::strerror(ENOENT));
}

TEST_CASE("SharedLibrary::resolve: alternatives newest first, optional slots left empty, the first missing named") {
    SharedLibrary libc("libc.so.6");
    REQUIRE(libc.loaded());
    using Length = std::size_t (*)(const char*);
    Length strlen_slot = nullptr, either = nullptr, optional = nullptr, missing = nullptr, later = nullptr;
    CHECK(libc.resolve({Symbol::required(strlen_slot, "strlen")}).empty());
    REQUIRE(strlen_slot != nullptr);
    CHECK(strlen_slot("four") == 4);

    const std::string lacking = libc.resolve({
        Symbol::required(either, {"provision_no_such_strlen_v2", "strlen"}),
        Symbol::optional(optional, "provision_no_such_function"),
        Symbol::required(missing, {"provision_missing_v2", "provision_missing"}),
        Symbol::required(later, "provision_missing_later"),
    });
    CHECK(lacking == "provision_missing");  // the first one, by the name every version has
    CHECK(either == strlen_slot);
    CHECK(optional == nullptr);
    CHECK(missing == nullptr);
    CHECK(later == nullptr);

    SharedLibrary absent("libprovision-no-such-library.so");
    CHECK_FALSE(absent.loaded());
    CHECK_FALSE(absent.error().empty());
    CHECK(absent.resolve({Symbol::required(strlen_slot, "strlen")}) == "strlen");
    CHECK(strlen_slot == nullptr);
}
