#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "workload_env/env_file.h"
#include "support/reliability_record.h"
#include "test_support.h"

using namespace provision;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

TEST_CASE("shell_quote single-quotes and escapes single quotes") {
    CHECK(shell_quote("plain") == "'plain'");
    CHECK(shell_quote("") == "''");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("$(rm -rf /) `x` \"y\"") == "'$(rm -rf /) `x` \"y\"'");
}

TEST_CASE("render_env_file writes a comment header and one export per line") {
    EnvSettings settings;
    settings.set("PROVISION_ATTENTION", "flash3");
    settings.set("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    const std::string text = render_env_file(settings, "first line\nGPU 0: evil\nexport PWNED=1");
    CHECK(text ==
          "# first line\n# GPU 0: evil\n# export PWNED=1\n"
          "export PROVISION_ATTENTION='flash3'\nexport PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True'\n");
}

TEST_CASE("EnvSettings refuses names that are not shell variable names") {
    EnvSettings settings;
    CHECK_THROWS_AS(settings.set("1ABC", "x"), Error);
    CHECK_THROWS_AS(settings.set("A-B", "x"), Error);
    CHECK_THROWS_AS(settings.set("A;rm", "x"), Error);
    CHECK_NOTHROW(settings.set("_A1", "x"));
    CHECK(is_valid_variable_name("PROVISION_ATTENTION"));
    CHECK_FALSE(is_valid_variable_name(""));
}

TEST_CASE("writing replaces the old file atomically, mode 0644, no temporary left behind") {
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    write_file(path, "old contents\n");
    write_env_file_atomically(path, "export A='1'\n");
    CHECK(read_file(path) == "export A='1'\n");
    struct stat info {};
    REQUIRE(stat(path.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0644);
    int entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
    CHECK(entries == 1);
}

TEST_CASE("a failed write leaves the old file as it was") {
    if (geteuid() == 0) {
        // root ignores folder permissions; a missing folder still fails.
        TempDir dir;
        const std::string path = dir.file("missing/sub/.env_settings");
        CHECK_THROWS_AS(write_env_file_atomically(path, "x"), Error);
        return;
    }
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    write_file(path, "old contents\n");
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    try {
        write_env_file_atomically(path, "new");
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::io_failure);
        CHECK_THAT(error.what(), Catch::Contains("unchanged"));
    }
    CHECK(read_file(path) == "old contents\n");
}

TEST_CASE("a path whose folder does not exist is a clear error") {
    TempDir dir;
    try {
        write_env_file_atomically(dir.file("no/such/folder/.env"), "x");
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::io_failure);
        CHECK_THAT(error.what(), Catch::Contains("cannot create a temporary file"));
    }
    reliability::record("env file", "the env file's folder does not exist",
                        "Error(io_failure): cannot create a temporary file in the folder");
}

TEST_CASE("a planted symlink at the target is neither followed nor replaced") {
    TempDir dir;
    const std::string victim = dir.file("victim");
    write_file(victim, "precious\n");
    const std::string path = dir.file(".env_settings");
    std::filesystem::create_symlink(victim, path);
    try {
        write_env_file_atomically(path, "export A='1'\n");
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::io_failure);
        CHECK_THAT(error.what(), Catch::Contains("it is a symbolic link to " + victim));
    }
    CHECK(read_file(victim) == "precious\n");
    CHECK(std::filesystem::is_symlink(path));
    reliability::record("env file", "a symlink planted at the env file's own path",
                        "Error(io_failure) naming the link; link and the file it points to untouched");
}

namespace {

int count_entries(const std::string& folder) {
    int entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++entries;
    return entries;
}

// Runs `body` in a forked child and returns its exit status (128 + signal
// when it died of one), so process-wide limits stay out of the test runner.
int in_child(const std::function<int()>& body) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) _exit(body());
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("symlinks planted at the temporary names are never followed") {
    TempDir dir;
    const std::string victim = dir.file("victim");
    write_file(victim, "precious\n");
    const std::string elsewhere = dir.file("created-through-a-link");
    const std::string path = dir.file(".env_settings");
    // Names a careless writer would use, the mkstemp template itself, and
    // many random suffixes of that template: each a link to the victim or a
    // dangling link (which O_CREAT without O_EXCL would follow and create).
    std::vector<std::string> planted = {path + ".tmp", path + ".new", path + "~", dir.file("..env_settings.XXXXXX"),
                                        dir.file("..env_settings.tmp")};
    for (int i = 0; i < 300; ++i) {
        std::string name = dir.file("..env_settings.XXXXXX");
        const int fd = mkstemp(name.data());
        REQUIRE(fd >= 0);
        ::close(fd);
        std::filesystem::remove(name);
        planted.push_back(name);
    }
    for (std::size_t i = 0; i < planted.size(); ++i)
        std::filesystem::create_symlink(i % 2 ? victim : elsewhere, planted[i]);
    for (int round = 0; round < 20; ++round) write_env_file_atomically(path, "export A='1'\n");
    CHECK(read_file(victim) == "precious\n");
    CHECK_FALSE(std::filesystem::exists(elsewhere));
    CHECK_FALSE(std::filesystem::is_symlink(path));
    CHECK(read_file(path) == "export A='1'\n");
    for (const auto& link : planted) CHECK(std::filesystem::is_symlink(link));
    CHECK(count_entries(dir.path()) == static_cast<int>(planted.size()) + 2);  // + victim + the env file
    reliability::record("env file", "symlinks planted at the temporary file's names (to a file, dangling)",
                        "never followed: the temporary file is created exclusively (mkostemp, O_EXCL)");
}

TEST_CASE("the env file is 0644 whatever the umask") {
    for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}, mode_t{0777}}) {
        INFO("umask " << mask);
        TempDir dir;
        const std::string path = dir.file(".env_settings");
        const mode_t old = umask(mask);
        write_env_file_atomically(path, "export A='1'\n");
        umask(old);
        struct stat info {};
        REQUIRE(stat(path.c_str(), &info) == 0);
        CHECK((info.st_mode & 07777) == 0644);
        REQUIRE(stat(dir.path().c_str(), &info) == 0);
        CHECK((info.st_mode & 07777) == 0700);  // mkdtemp's mode, untouched
    }
    reliability::record("env file", "umask 000, 022, 077 or 777 at write time",
                        "file mode 0644 every time; the folder's mode untouched");
}

TEST_CASE("a disk that fills up mid-write leaves the old file and no temporary") {
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    write_file(path, "export OLD='kept'\n");
    const std::string big = "# " + std::string(4000, 'x') + "\nexport A='1'\n";
    // A file-size limit below the contents: the first write() is cut short,
    // the next fails (EFBIG, as ENOSPC would on a full disk).
    const int status = in_child([&] {
        signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{1000, 1000};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
        try {
            write_env_file_atomically(path, big);
        } catch (const Error& error) {
            const std::string message = error.what();
            return error.code() == ExitCode::io_failure && message.find("unchanged") != std::string::npos ? 0 : 11;
        }
        return 12;
    });
    CHECK(status == 0);
    CHECK(read_file(path) == "export OLD='kept'\n");
    CHECK(count_entries(dir.path()) == 1);
    reliability::record("env file", "disk full after part of the file was written (RLIMIT_FSIZE, unit)",
                        "Error(io_failure) saying the old file is unchanged; temporary file removed");
}

TEST_CASE("a folder at the env file path is left as it is, with no temporary") {
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    std::filesystem::create_directories(path + "/inside");  // a folder in the way
    try {
        write_env_file_atomically(path, "export A='1'\n");
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::io_failure);
        CHECK_THAT(error.what(), Catch::Contains("it is a folder, not a regular file"));
    }
    CHECK(std::filesystem::is_directory(path + "/inside"));
    CHECK(count_entries(dir.path()) == 1);
    reliability::record("env file", "the env file path is a folder",
                        "Error(io_failure) naming a folder; the folder and its contents untouched; no temporary file");
}

TEST_CASE("readers racing many writers see one complete file, never a mix") {
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    std::vector<std::string> versions;
    for (int i = 0; i < 6; ++i)
        versions.push_back(fmt::format("# writer {}\n{}export N='{}'\n", i, std::string(2000 + 700 * i, '#') + "\n", i));
    write_file(path, versions[0]);
    std::atomic<bool> done{false};
    std::atomic<int> reads{0}, torn{0};
    std::thread reader([&] {
        while (!done) {
            const std::string text = read_file(path);
            if (std::find(versions.begin(), versions.end(), text) == versions.end()) ++torn;
            ++reads;
        }
    });
    std::vector<std::thread> writers;
    for (int w = 0; w < 6; ++w)
        writers.emplace_back([&, w] {
            for (int round = 0; round < 20; ++round) write_env_file_atomically(path, versions[(w + round) % 6]);
        });
    for (auto& writer : writers) writer.join();
    done = true;
    reader.join();
    CHECK(reads > 0);
    CHECK(torn == 0);
    CHECK(std::find(versions.begin(), versions.end(), read_file(path)) != versions.end());
    CHECK(count_entries(dir.path()) == 1);
    reliability::record("env file", "6 writers x 20 writes racing a reader on one env file (unit)",
                        "every read is one complete version; one file left, no temporary");
}

TEST_CASE("sh and bash read back exactly the values written, whatever bytes they hold") {
    // The values most likely to break quoting; fuzz_env_file tries many more.
    const std::vector<std::string> nasty = {
        "", "plain", "it's", "'", "''", "'\\''", "\\", "\\'", "\"", "$(touch pwned)", "`touch pwned`", "${HOME}",
        "$HOME $1 $@ $* $$ $?", "~", "*", "?[a]", "a;b&c|d<e>f", "#not a comment", "!!", "line\nexport X='1'\n",
        "\n", "\n\n", "trailing\n", "\r\n", "\t tab and spaces ", "é中😀", "\x01\x02\x7f\x80\xfe\xff", "=",
        "a=b", std::string(5000, '\'')};
    EnvSettings settings;
    for (std::size_t i = 0; i < nasty.size(); ++i) settings.set(fmt::format("V{}", i), nasty[i]);
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    write_env_file_atomically(path, render_env_file(settings, "header with 'quotes' and $(command)\nsecond line"));
    const std::string marker = dir.file("pwned");
    for (const char* shell : {"/bin/sh", "/bin/bash"}) {
        if (access(shell, X_OK) != 0) continue;
        INFO(shell);
        // Prints every value NUL-terminated; run in the folder so a stray
        // "touch pwned" would show.
        std::string script = fmt::format("cd '{}' && . '{}' && printf '%s\\0'", dir.path(), path);
        for (std::size_t i = 0; i < nasty.size(); ++i) script += fmt::format(" \"$V{}\"", i);
        write_file(dir.file("script"), script);
        FILE* pipe = popen(fmt::format("{} '{}'", shell, dir.file("script")).c_str(), "r");
        REQUIRE(pipe != nullptr);
        std::string output;
        char buffer[4096];
        for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
        CHECK(pclose(pipe) == 0);
        std::vector<std::string> values;
        for (std::size_t start = 0, end; (end = output.find('\0', start)) != std::string::npos; start = end + 1)
            values.push_back(output.substr(start, end - start));
        CHECK(values == nasty);
        CHECK_FALSE(std::filesystem::exists(marker));
    }
    reliability::record("env file", "values with quotes, $( ), backticks, newlines, CR, high bytes, 5000 quotes",
                        "sourced by sh and bash: exactly the values written, nothing executed");
}
