#include "harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <catch2/catch.hpp>

namespace e2e {

namespace {

// rchar of a process that has exited but is not reaped yet.
std::uint64_t bytes_read_by(pid_t pid) {
    std::ifstream io("/proc/" + std::to_string(pid) + "/io");
    std::string key;
    std::uint64_t value = 0;
    while (io >> key >> value)
        if (key == "rchar:") return value;
    return 0;
}

// With PROVISION_E2E_RUN_LOG naming a file (bench/readers/e2e-old-binary
// sets it), one line per measured run: peak RSS in KiB, bytes read, wall seconds,
// exit status, whether the hang guard killed it, and the program.
void log_run(const std::string& program, const Result& result, std::chrono::steady_clock::duration wall) {
    const char* log = std::getenv("PROVISION_E2E_RUN_LOG");
    if (log == nullptr || *log == '\0') return;
    const std::string line =
        std::to_string(result.peak_rss_kib) + "\t" + std::to_string(result.bytes_read) + "\t" +
        std::to_string(std::chrono::duration<double>(wall).count()) + "\t" + std::to_string(result.exit_code) + "\t" +
        (result.killed_by_guard ? "killed" : "ended") + "\t" + program + "\n";
    const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    [[maybe_unused]] const auto written = ::write(fd, line.data(), line.size());
    ::close(fd);
}

// `program` looked up on this process's PATH (the run's own PATH may hold
// nothing): the measured run's helper executes it by path.
std::string on_own_path(const std::string& program) {
    if (program.find('/') != std::string::npos) return program;
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::string candidate = std::string(rest.substr(0, colon)) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    return program;
}

// The exit status as the harness reports it: the code, or 128 + a signal.
int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

int measured_run_main(int argc, char** argv) {
    if (argc < 3) return 127;
    const pid_t child = ::fork();
    if (child < 0) return 127;
    if (child == 0) {
        ::close(kMeasureFd);
        ::execv(argv[2], argv + 2);
        _exit(127);
    }
    siginfo_t exited{};
    while (::waitid(P_PID, static_cast<id_t>(child), &exited, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    const std::uint64_t bytes = bytes_read_by(child);
    int status = 0;
    rusage usage{};
    while (::wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    const std::string figures = std::to_string(usage.ru_maxrss) + " " + std::to_string(bytes) + "\n";
    [[maybe_unused]] const auto written = ::write(kMeasureFd, figures.data(), figures.size());
    return status_code(status);
}

namespace {

// Appends each JSON document provision printed (its report or error
// document; one a line under --repeat; a workload's own output after the
// report is left out) to $PROVISION_E2E_REPORT_LOG, one compact document a
// line, for the schema test (tests/schema) to validate every one.
void record_reports(const std::string& program, const std::vector<std::string>& args, const std::string& out) {
    const char* log = std::getenv("PROVISION_E2E_REPORT_LOG");
    const bool provision = program == PROVISION_BINARY ||
                           (args.size() > 1 && args[0] == kMeasuredRun && args[1] == PROVISION_BINARY);
    if (!log || !*log || !provision || out.empty() || out.front() != '{') return;
    std::vector<nlohmann::json> documents;
    auto whole = nlohmann::json::parse(out, nullptr, false);
    if (!whole.is_discarded()) {
        documents.push_back(std::move(whole));
    } else if (const auto end = out.find("\n}\n"); end != std::string::npos &&
               !nlohmann::json::parse(out.substr(0, end + 2), nullptr, false).is_discarded()) {
        documents.push_back(nlohmann::json::parse(out.substr(0, end + 2)));  // a report, then the workload's output
    } else {
        std::istringstream lines(out);
        for (std::string line; std::getline(lines, line);) {
            auto document = nlohmann::json::parse(line, nullptr, false);
            if (!document.is_discarded() && document.is_object() && document.contains("schema"))
                documents.push_back(std::move(document));
        }
    }
    std::ofstream file(log, std::ios::app);
    for (const auto& document : documents) file << document.dump() << '\n';
}

}  // namespace

Result run(const std::string& program, const std::vector<std::string>& args,
           const std::map<std::string, std::string>& env, const std::string& cwd) {
    RunOptions options;
    options.cwd = cwd;
    return run(program, args, env, options);
}

Result run(const std::string& program, const std::vector<std::string>& args,
           const std::map<std::string, std::string>& env, const RunOptions& options) {
    int out_pipe[2], err_pipe[2], measure_pipe[2] = {-1, -1};
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
    if (options.measure && pipe2(measure_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (options.broken_stdout) {
        close(out_pipe[0]);  // no reader, ever
        out_pipe[0] = -1;
    }

    std::map<std::string, std::string> environment = env;
    if (!environment.count("PATH")) {
        environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
        // provision reads the packages of the Python the workload would run
        // (python3 on PATH, here the machine's own): point it at an empty
        // venv instead, so that no test depends on what this machine has.
        if (!environment.count("VIRTUAL_ENV"))
            environment["VIRTUAL_ENV"] = source_path("tests/fixtures/python/empty-venv");
    }
    if (!environment.count("HOME")) environment["HOME"] = "/tmp";
    // Nor on the NCCL this machine's loader would find (a CUDA toolkit's).
    if (!environment.count("PROVISION_TEST_SYSTEM_LIBRARIES")) environment["PROVISION_TEST_SYSTEM_LIBRARIES"] = "";
    // Nor on this machine's kernel log: an empty one unless a test gives its own.
    if (!environment.count("PROVISION_TEST_KMSG")) environment["PROVISION_TEST_KMSG"] = "/dev/null";
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : environment) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    // Measured, the program runs as the child of this binary's small helper
    // (measured_run_main): a child spawned from this large process would
    // start its peak RSS from ours.
    std::vector<std::string> argv_strings;
    if (options.measure) argv_strings = {"e2e_tests", kMeasuredRun, on_own_path(program)};
    else argv_strings = {program};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (out_pipe[0] >= 0) posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
    posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
    if (options.measure) posix_spawn_file_actions_adddup2(&actions, measure_pipe[1], kMeasureFd);
    if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
    // Its own process group, so that the hang guard kills the helper and
    // the program together.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    short flags = 0;
    if (options.measure) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&attributes, 0);
    }
    // As a shell starts a pipeline's programs: SIGPIPE's default disposition,
    // whatever this process was given.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    if (options.broken_stdout) {
        flags |= POSIX_SPAWN_SETSIGDEF;
        posix_spawnattr_setsigdefault(&attributes, &pipe_signal);
    }
    posix_spawnattr_setflags(&attributes, flags);
    pid_t pid = 0;
    const int rc = options.measure
                       ? posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv.data(), envp.data())
                       : posix_spawnp(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (options.measure) close(measure_pipe[1]);
    if (rc != 0) {
        if (out_pipe[0] >= 0) close(out_pipe[0]);
        close(err_pipe[0]);
        if (options.measure) close(measure_pipe[0]);
        throw std::runtime_error("cannot start " + program);
    }

    Result result;
    result.pid = pid;
    const auto started = std::chrono::steady_clock::now();
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = out_pipe[0] >= 0 ? 2 : 1;
    char buffer[65536];
    const auto deadline = started + std::chrono::duration<double>(options.kill_after_s);
    while (open_fds > 0) {
        int wait_ms = -1;
        if (options.kill_after_s > 0 && !result.killed_by_guard) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                // Its descendants may hold the pipes: the pipes close when they end.
                ::kill(options.measure ? -pid : pid, SIGKILL);
                result.killed_by_guard = true;
            } else {
                wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000));
            }
        }
        if (poll(fds, 2, wait_ms) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else {
                (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
            }
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = status_code(status);
    if (options.measure) {
        std::string figures;
        for (ssize_t n; (n = read(measure_pipe[0], buffer, sizeof buffer)) > 0;)
            figures.append(buffer, static_cast<std::size_t>(n));
        close(measure_pipe[0]);
        std::istringstream(figures) >> result.peak_rss_kib >> result.bytes_read;
        log_run(program, result, std::chrono::steady_clock::now() - started);
    }
    record_reports(program, args, result.out);
    return result;
}

bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

void check_memory_bound(const Result& result) {
    if (sanitized_build()) return;
    CHECK(result.peak_rss_kib < kPeakRssBoundKib);
}

Result provision(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    return run(PROVISION_BINARY, args, env);
}

std::string source_path(const std::string& relative) { return std::string(PROVISION_SOURCE_DIR) + "/" + relative; }
std::string gpu_fixture(const std::string& name) { return source_path("tests/fixtures/gpus/" + name + ".toml"); }
std::string site_packages(const std::string& name) { return source_path("tests/fixtures/site-packages/" + name); }

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "provision-e2e-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                 ignored);
    std::filesystem::remove_all(path_, ignored);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
}

void write_file(const std::string& path, const std::string& contents) {
    const auto folder = std::filesystem::path(path).parent_path();
    if (!folder.empty()) std::filesystem::create_directories(folder);
    std::ofstream out(path, std::ios::binary);
    out << contents;
    if (!out) throw std::runtime_error("cannot write " + path);
}

nlohmann::json report(const Result& result) {
    INFO("stdout: " << result.out << "\nstderr: " << result.err);
    nlohmann::json parsed;
    REQUIRE_NOTHROW(parsed = nlohmann::json::parse(result.out));
    return parsed;
}

std::map<std::string, std::string> source_env_file(const std::string& path, const std::vector<std::string>& names) {
    // Values are printed NUL-terminated so any byte but NUL survives.
    std::string script = ". \"$1\" || exit 99\n";
    for (const auto& name : names) script += "printf '%s\\0' \"$" + name + "\"\n";
    const Result result = run("/bin/sh", {"-c", script, "sh", path});
    if (result.exit_code != 0) throw std::runtime_error("sourcing " + path + " failed: " + result.err);
    std::map<std::string, std::string> values;
    std::size_t position = 0;
    for (const auto& name : names) {
        const auto end = result.out.find('\0', position);
        if (end == std::string::npos) throw std::runtime_error("bad sh output");
        values[name] = result.out.substr(position, end - position);
        position = end + 1;
    }
    return values;
}

pid_t start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env, int stdout_fd) {
    std::map<std::string, std::string> merged = {
        {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/tmp"}, {"PROVISION_TEST_SYSTEM_LIBRARIES", ""},
        {"PROVISION_TEST_KMSG", "/dev/null"}};
    for (const auto& [name, value] : env) merged[name] = value;
    std::vector<std::string> env_strings;
    for (const auto& [name, value] : merged) env_strings.push_back(name + "=" + value);
    std::vector<char*> envp, argv;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> copy = args;
    for (auto& s : copy) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    else posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    // posix_spawnp searches the PATH of this process, not the child's.
    const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
    return pid;
}

const nlohmann::json* candidate(const nlohmann::json& report, const std::string& mechanism) {
    for (const auto& entry : report["candidates"])
        if (entry["mechanism"] == mechanism) return &entry;
    return nullptr;
}

std::string reasons_of(const nlohmann::json& report, const std::string& mechanism) {
    const auto* entry = candidate(report, mechanism);
    return entry ? (*entry)["reasons"].dump() : std::string("(no such candidate)");
}

std::vector<nlohmann::json> findings_of(const nlohmann::json& report, const std::string& signal) {
    std::vector<nlohmann::json> found;
    for (const auto& entry : report["findings"])
        if (entry["signal"] == signal) found.push_back(entry);
    return found;
}

bool skip_unless_provision_can_be_pid_1() {
    if (::geteuid() != 0 || run("unshare", {"--pid", "--fork", "true"}).exit_code != 0) {
        WARN("skipped: a new PID namespace (unshare --pid --fork) needs root");
        return true;
    }
#if defined(__SANITIZE_ADDRESS__)
    WARN("skipped: built with AddressSanitizer, whose leak check at exit does not finish as PID 1 of a new "
         "PID namespace");
    return true;
#else
    return false;
#endif
}

}  // namespace e2e
