#include "validate/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/termination.h"

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace provision {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kCaptureLimit = 1 << 20;

struct Running {
    pid_t pid = -1;
    int out_fd = -1;
    int err_fd = -1;
    bool finished = false;
    Clock::time_point start;
};

void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
}

// Reads what is available; closes the descriptor at end of file.
void drain(int& fd, std::string& into) {
    char buffer[4096];
    while (fd >= 0) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n > 0) {
            if (into.size() < kCaptureLimit) into.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0) {
            close_fd(fd);
        } else if (errno != EINTR) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) close_fd(fd);
            return;
        }
    }
}

std::string spawn(const std::vector<std::string>& command, Running& child) {
    if (command.empty()) return "empty command";
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        const int saved = errno;
        close(out_pipe[0]);
        close(out_pipe[1]);
        return fmt::format("pipe: {}", std::strerror(saved));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t no_signals, all_signals;
    sigemptyset(&no_signals);
    sigfillset(&all_signals);
    posix_spawnattr_setsigmask(&attributes, &no_signals);
    posix_spawnattr_setsigdefault(&attributes, &all_signals);
    posix_spawnattr_setpgroup(&attributes, 0);  // its own group, so a kill reaches its children too
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<char*> argv;
    for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    child.start = Clock::now();
    const int status = posix_spawn(&child.pid, argv[0], &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (status != 0) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        return fmt::format("cannot start {}: {}", command[0], std::strerror(status));
    }
    remember_process_group(child.pid);  // a SIGTERM to provision stops it too
    child.out_fd = out_pipe[0];
    child.err_fd = err_pipe[0];
    fcntl(child.out_fd, F_SETFL, fcntl(child.out_fd, F_GETFL) | O_NONBLOCK);
    fcntl(child.err_fd, F_SETFL, fcntl(child.err_fd, F_GETFL) | O_NONBLOCK);
    return {};
}

void record_exit(int status, ChildOutcome& outcome) {
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
}

void finish(Running& child, ChildOutcome& outcome) {
    drain(child.out_fd, outcome.out);
    drain(child.err_fd, outcome.err);
    close_fd(child.out_fd);
    close_fd(child.err_fd);
    outcome.seconds = std::chrono::duration<double>(Clock::now() - child.start).count();
    forget_process_group(child.pid);
    child.finished = true;
}

}  // namespace

std::string describe_signal(int signal) { return fmt::format("signal {} ({})", signal, strsignal(signal)); }

std::vector<ChildOutcome> run_children(const std::vector<std::vector<std::string>>& commands, double timeout_s) {
    std::vector<ChildOutcome> outcomes(commands.size());
    std::vector<Running> children(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        outcomes[i].start_error = spawn(commands[i], children[i]);
        if (!outcomes[i].start_error.empty()) children[i].finished = true;
    }
    const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));

    for (;;) {
        const auto now = Clock::now();
        bool any_running = false;
        for (std::size_t i = 0; i < children.size(); ++i) {
            Running& child = children[i];
            if (child.finished) continue;
            int status = 0;
            if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
                record_exit(status, outcomes[i]);
                finish(child, outcomes[i]);
            } else if (now - child.start >= limit) {
                kill(-child.pid, SIGKILL);
                kill(child.pid, SIGKILL);  // in case it left its group
                while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
                }
                record_exit(status, outcomes[i]);
                outcomes[i].timed_out = true;
                finish(child, outcomes[i]);
            } else {
                any_running = true;
            }
        }
        if (!any_running) break;

        // Sleep until output arrives, or briefly, to notice exits and the limit.
        std::vector<pollfd> watched;
        for (const Running& child : children) {
            if (child.finished) continue;
            if (child.out_fd >= 0) watched.push_back({child.out_fd, POLLIN, 0});
            if (child.err_fd >= 0) watched.push_back({child.err_fd, POLLIN, 0});
        }
        poll(watched.data(), watched.size(), 10);
        for (std::size_t i = 0; i < children.size(); ++i) {
            if (children[i].finished) continue;
            drain(children[i].out_fd, outcomes[i].out);
            drain(children[i].err_fd, outcomes[i].err);
        }
    }
    return outcomes;
}

}  // namespace provision
