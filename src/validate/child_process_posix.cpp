#include "validate/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/termination.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

extern char** environ;

namespace provision {
namespace {

constexpr std::size_t kCaptureLimit = 1 << 20;

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

// provision's environment with `changes` set or replaced, as posix_spawn takes it.
std::vector<std::string> environment_with(const std::map<std::string, std::string>& changes) {
    std::vector<std::string> entries;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text = *entry;
        const std::string name = text.substr(0, text.find('='));
        if (!changes.count(name)) entries.push_back(text);
    }
    for (const auto& [name, value] : changes) entries.push_back(name + "=" + value);
    return entries;
}

struct Pipe {
    int read = -1;
    int write = -1;
    ~Pipe() {
        close_fd(read);
        close_fd(write);
    }
};

}  // namespace

std::string describe_signal(int signal) { return fmt::format("signal {} ({})", signal, strsignal(signal)); }

ChildProcess::ChildProcess(const std::vector<std::string>& command, const std::map<std::string, std::string>& environment) {
    start_ = Clock::now();
    if (command.empty()) {
        outcome_.start_error = "empty command";
        return;
    }
    Pipe in, out, err;
    for (Pipe* p : {&in, &out, &err}) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) {
            outcome_.start_error = fmt::format("pipe: {}", std::strerror(errno));
            return;
        }
        p->read = fds[0];
        p->write = fds[1];
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
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
    std::vector<std::string> env_entries = environment_with(environment);
    std::vector<char*> envp;
    for (auto& entry : env_entries) envp.push_back(entry.data());
    envp.push_back(nullptr);
    start_ = Clock::now();
    const int status = posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (status != 0) {
        pid_ = -1;
        outcome_.start_error = fmt::format("cannot start {}: {}", command[0], std::strerror(status));
        return;
    }
    remember_process_group(pid_);  // a SIGTERM to provision stops it too
    std::swap(in_fd_, in.write);
    std::swap(out_fd_, out.read);
    std::swap(err_fd_, err.read);
    for (const int fd : {in_fd_, out_fd_, err_fd_}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
    close_fd(in_fd_);
    if (running() && !let_go_ && !poll_exit()) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);  // in case it left its group
        poll_exit();            // it may take the driver a moment to let go: not waited for
    }
    if (pid_ > 0) forget_process_group(pid_);
    close_fd(out_fd_);
    close_fd(err_fd_);
}

bool ChildProcess::write_input(const std::string& text) {
    if (in_fd_ < 0) return false;
    // A child that has gone would raise SIGPIPE here: hold it back, and take
    // the one this write raised, so provision never dies of it.
    sigset_t pipe_signal, previous;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
    bool written = true;
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = write(in_fd_, text.data() + done, text.size() - done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd watched{in_fd_, POLLOUT, 0};
            poll(&watched, 1, 100);
        } else {
            if (errno == EPIPE) {
                const timespec now{0, 0};
                sigtimedwait(&pipe_signal, nullptr, &now);
            }
            written = false;
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return written;
}

void ChildProcess::close_input() { close_fd(in_fd_); }

void ChildProcess::read_available() {
    drain(out_fd_, outcome_.out);
    drain(err_fd_, outcome_.err);
}

void ChildProcess::record_end(int status) {
    if (WIFEXITED(status)) outcome_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome_.signal = WTERMSIG(status);
    outcome_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    ended_ = true;
    read_available();
}

bool ChildProcess::poll_exit() {
    if (pid_ <= 0) return true;
    if (ended_) return true;
    int status = 0;
    pid_t reaped;
    do {
        reaped = waitpid(pid_, &status, WNOHANG);
    } while (reaped < 0 && errno == EINTR);
    if (reaped == pid_) {
        record_end(status);
        return true;
    }
    if (reaped < 0) {  // not ours any more (reaped elsewhere): nothing to wait for
        ended_ = true;
        return true;
    }
    return false;
}

void ChildProcess::kill(bool timed_out) {
    if (!running()) return;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // in case it left its group
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    record_end(status);
    outcome_.timed_out = timed_out;
}

void wait_for_output(const std::vector<const ChildProcess*>& children, std::chrono::milliseconds limit) {
    std::vector<pollfd> watched;
    for (const ChildProcess* child : children) {
        if (child->out_fd() >= 0) watched.push_back({child->out_fd(), POLLIN, 0});
        if (child->err_fd() >= 0) watched.push_back({child->err_fd(), POLLIN, 0});
    }
    if (watched.empty()) {
        std::this_thread::sleep_for(limit);
        return;
    }
    poll(watched.data(), watched.size(), static_cast<int>(limit.count()));
}

std::vector<ChildOutcome> run_children(const std::vector<std::vector<std::string>>& commands, double timeout_s) {
    std::vector<std::unique_ptr<ChildProcess>> children;
    for (const auto& command : commands) {
        children.push_back(std::make_unique<ChildProcess>(command));
        children.back()->close_input();
    }
    const auto limit = std::chrono::duration_cast<ChildProcess::Clock::duration>(std::chrono::duration<double>(timeout_s));
    for (;;) {
        std::vector<const ChildProcess*> running;
        for (auto& child : children) {
            if (!child->running()) continue;
            child->read_available();
            if (child->poll_exit()) continue;
            if (ChildProcess::Clock::now() - child->started_at() >= limit) {
                child->kill(true);
                continue;
            }
            running.push_back(child.get());
        }
        if (running.empty()) break;
        // Sleep until output arrives, or briefly, to notice exits and the limit.
        wait_for_output(running, std::chrono::milliseconds(10));
    }
    std::vector<ChildOutcome> outcomes;
    for (const auto& child : children) outcomes.push_back(child->outcome());
    return outcomes;
}

}  // namespace provision
