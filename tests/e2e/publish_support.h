// What the end-to-end tests of --node-labels, --metrics and --repeat share:
// the Kubernetes label rules written out again (from the rules themselves,
// not from provision's code), a reader of NFD feature files, the tools the
// cluster really runs (promtool, node-exporter) when installed, a process
// run in the background and always stopped, and a plain HTTP GET.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "harness.h"

namespace publish_test {

// Why `key`=`value` would not be a valid Kubernetes label ("" when valid):
// key = [prefix/]name, prefix a DNS-1123 subdomain of at most 253
// characters outside kubernetes.io and k8s.io (NFD's feature.node and
// profile.node subdomains excepted), name and value at most 63 characters
// of [A-Za-z0-9._-] that begin and end alphanumeric (a value may be empty).
inline std::string kubernetes_label_problem(const std::string& key, const std::string& value) {
    static const std::regex name(R"([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)");
    static const std::regex subdomain(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)");
    static const std::regex reserved(R"((.*\.)?(kubernetes\.io|k8s\.io))");
    static const std::regex nfd_own(R"((.*\.)?(feature|profile)\.node\.kubernetes\.io)");
    const auto slash = key.find('/');
    const std::string prefix = slash == std::string::npos ? "" : key.substr(0, slash);
    const std::string label = slash == std::string::npos ? key : key.substr(slash + 1);
    if (slash != std::string::npos) {
        if (prefix.size() > 253 || !std::regex_match(prefix, subdomain)) return "prefix is no DNS subdomain";
        if (std::regex_match(prefix, reserved) && !std::regex_match(prefix, nfd_own)) return "reserved prefix";
    }
    if (label.size() > 63 || !std::regex_match(label, name)) return "bad name";
    if (value.size() > 63 || (!value.empty() && !std::regex_match(value, name))) return "bad value";
    return "";
}

// A feature file read as nfd-worker reads it: blank lines and comments
// skipped, `key[=value]` split at the first '='.  Every line that starts
// "# +" must be a directive provision means: the expiry time.
inline std::map<std::string, std::string> read_labels(const std::string& path) {
    std::map<std::string, std::string> labels;
    std::istringstream lines(e2e::read_file(path));
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        if (line.starts_with("#")) {
            if (line.starts_with("# +")) CHECK(line.starts_with("# +expiry-time="));
            continue;
        }
        const auto equals = line.find('=');
        labels[line.substr(0, equals)] = equals == std::string::npos ? "true" : line.substr(equals + 1);
    }
    return labels;
}

// Checks every label of the file against Kubernetes' rules.
inline std::map<std::string, std::string> read_valid_labels(const std::string& path) {
    const auto labels = read_labels(path);
    for (const auto& [key, value] : labels) {
        INFO(path << ": " << key << "=" << value);
        CHECK(kubernetes_label_problem(key, value).empty());
    }
    return labels;
}

// An installed program, or "" (the test then skips and says why).
inline std::string installed(const std::string& name) {
    for (const char* folder : {"/usr/bin", "/usr/local/bin", "/bin"}) {
        const std::string path = std::string(folder) + "/" + name;
        if (::access(path.c_str(), X_OK) == 0) return path;
    }
    return "";
}

// `promtool check metrics < file`: exit 0 and no output when clean.
inline e2e::Result promtool_check(const std::string& promtool, const std::string& file) {
    return e2e::run("/bin/sh", {"-c", "\"$1\" check metrics < \"$2\"", "sh", promtool, file});
}

// Where a background program's stdout goes: with its stderr into the log,
// into a file of its own, or into a pipe whose reader has gone (every write
// fails with EPIPE, or raises SIGPIPE).
struct StdoutTo {
    enum Kind { log, file, broken_pipe } kind = log;
    std::string path;  // for `file`
};

// A program started in the background, its output in `log`; stopped (TERM,
// then KILL after `grace`) and reaped when the object goes away.
class Background {
public:
    Background(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
               const std::string& log, const StdoutTo& out = {}) {
        std::vector<std::string> env_strings{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp"};
        for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
        std::vector<char*> envp, argv;
        for (auto& text : env_strings) envp.push_back(text.data());
        envp.push_back(nullptr);
        std::vector<std::string> copy = args;
        for (auto& text : copy) argv.push_back(text.data());
        argv.push_back(nullptr);
        int broken[2] = {-1, -1};
        if (out.kind == StdoutTo::broken_pipe && ::pipe2(broken, O_CLOEXEC) == 0) ::close(broken[0]);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (out.kind == StdoutTo::file)
            posix_spawn_file_actions_addopen(&actions, 1, out.path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        else if (out.kind == StdoutTo::broken_pipe)
            posix_spawn_file_actions_adddup2(&actions, broken[1], 1);
        else
            posix_spawn_file_actions_adddup2(&actions, 2, 1);
        // As a shell starts a pipeline's programs: SIGPIPE's default disposition.
        posix_spawnattr_t attributes;
        posix_spawnattr_init(&attributes);
        sigset_t pipe_signal;
        sigemptyset(&pipe_signal);
        sigaddset(&pipe_signal, SIGPIPE);
        posix_spawnattr_setsigdefault(&attributes, &pipe_signal);
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
        const int rc = posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), envp.data());
        posix_spawnattr_destroy(&attributes);
        posix_spawn_file_actions_destroy(&actions);
        if (broken[1] >= 0) ::close(broken[1]);
        if (rc != 0) pid_ = 0;
    }
    ~Background() { stop(SIGTERM, std::chrono::seconds(5)); }
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;

    pid_t pid() const { return pid_; }
    bool running() {
        if (pid_ == 0 || exit_status_) return false;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) exit_status_ = decode(status);
        return !exit_status_;
    }
    // Sends `signal`, waits up to `grace` for the exit, then kills.  The exit
    // status (128 + N for a signal), or nullopt when it had to be killed.
    std::optional<int> stop(int signal, std::chrono::milliseconds grace) {
        if (pid_ == 0) return std::nullopt;
        if (exit_status_) return exit_status_;
        ::kill(pid_, signal);
        const auto deadline = std::chrono::steady_clock::now() + grace;
        int status = 0;
        while (std::chrono::steady_clock::now() < deadline) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_) return exit_status_ = decode(status);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        exit_status_ = -1;
        return std::nullopt;
    }

private:
    static int decode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }
    pid_t pid_ = 0;
    std::optional<int> exit_status_;
};

// Polls `ready` every 20 ms for at most `limit`; whether it became true.
inline bool wait_for(const std::function<bool()>& ready, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (ready()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return ready();
}

// A TCP port on 127.0.0.1 that was free a moment ago.
inline int free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
        port = ntohs(address.sin_port);
    ::close(fd);
    return port;
}

// GET http://127.0.0.1:PORT/PATH (HTTP/1.0, the server closes): the whole
// answer, head and body, or "" when nothing answers.
inline std::string http_get(int port, const std::string& path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
        const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
            char buffer[65536];
            for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) answer.append(buffer, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    return answer;
}

}  // namespace publish_test
