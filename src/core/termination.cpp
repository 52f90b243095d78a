#include "core/termination.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace provision {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

// Fixed storage the handler can read without allocating or locking: a
// slot's path is written before the slot is marked used.
constexpr std::size_t kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kSlots> temporary_paths;
std::array<std::atomic<bool>, kSlots> temporary_used;
std::array<std::atomic<pid_t>, kSlots> process_groups;

void on_termination(int signal) {
    for (std::size_t i = 0; i < kSlots; ++i) {
        if (const pid_t group = process_groups[i].load(); group > 0) ::kill(-group, SIGKILL);
        if (temporary_used[i].load()) ::unlink(temporary_paths[i].data());
    }
    ::_exit(128 + signal);  // async-signal-safe; no destructor or atexit runs
}

}  // namespace

void install_termination_handlers() {
    struct sigaction action {};
    action.sa_handler = on_termination;
    sigfillset(&action.sa_mask);  // one handler at a time
    for (const int signal : kSignals) ::sigaction(signal, &action, nullptr);
    sigset_t unblocked;
    sigemptyset(&unblocked);
    for (const int signal : kSignals) sigaddset(&unblocked, signal);
    ::sigprocmask(SIG_UNBLOCK, &unblocked, nullptr);
}

void restore_default_signals() {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    for (const int signal : kSignals) ::sigaction(signal, &action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Called from the main thread only; the handler may run at any moment.
void remember_temporary_file(const std::string& path) {
    if (path.size() >= kPathBytes) return;
    for (std::size_t i = 0; i < kSlots; ++i) {
        if (temporary_used[i].load()) continue;
        std::memcpy(temporary_paths[i].data(), path.c_str(), path.size() + 1);
        temporary_used[i].store(true);  // published after the path is complete
        return;
    }
}

void forget_temporary_file(const std::string& path) {
    for (std::size_t i = 0; i < kSlots; ++i) {
        if (temporary_used[i].load() && path == temporary_paths[i].data()) {
            temporary_used[i].store(false);
            return;
        }
    }
}

void remove_at_termination(const std::string& path) { remember_temporary_file(path); }

TerminationDeferred::TerminationDeferred() {
    sigset_t termination;
    sigemptyset(&termination);
    for (const int signal : kSignals) sigaddset(&termination, signal);
    ::pthread_sigmask(SIG_BLOCK, &termination, &previous_);
}

TerminationDeferred::~TerminationDeferred() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void remember_process_group(pid_t group) {
    for (auto& slot : process_groups) {
        pid_t expected = 0;
        if (slot.compare_exchange_strong(expected, group)) return;
    }
}

void forget_process_group(pid_t group) {
    for (auto& slot : process_groups) {
        pid_t expected = group;
        if (slot.compare_exchange_strong(expected, 0)) return;
    }
}

}  // namespace provision
