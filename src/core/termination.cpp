#include "core/termination.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace provision {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

// Fixed storage the handler can read without allocating or locking.  The
// main thread changes a slot only with the signals held back, and the
// handler runs on the main thread only, so it never sees a slot half-written.
constexpr std::size_t kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
struct RemovedFile {
    std::array<char, kPathBytes> path;
    FileId file;
    bool used = false;
};
std::array<RemovedFile, kSlots> removed_files;
std::array<std::atomic<pid_t>, kSlots> process_groups;
std::atomic<pid_t> main_thread{0};

void on_termination(int signal) {
    // Only the main thread stops the run: another thread passes the signal
    // on (pending there while the main thread holds it back) and goes on.
    if (const pid_t main = main_thread.load(); main != 0 && ::gettid() != main) {
        ::tgkill(::getpid(), main, signal);
        return;
    }
    for (const auto& group : process_groups)
        if (const pid_t id = group.load(); id > 0) ::kill(-id, SIGKILL);
    for (const auto& entry : removed_files) {
        struct stat info {};
        if (entry.used && ::lstat(entry.path.data(), &info) == 0 && S_ISREG(info.st_mode) &&
            file_id(info) == entry.file)
            ::unlink(entry.path.data());
    }
    ::_exit(128 + signal);  // async-signal-safe; no destructor or atexit runs
}

RemovedFile* slot_of(const std::string& path) {
    for (auto& entry : removed_files)
        if (entry.used && path == entry.path.data()) return &entry;
    return nullptr;
}

}  // namespace

void install_termination_handlers() {
    main_thread.store(::gettid());
    struct sigaction action {};
    action.sa_handler = on_termination;
    sigfillset(&action.sa_mask);  // one handler at a time
    for (const int signal : kSignals) ::sigaction(signal, &action, nullptr);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, nullptr);
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
    // An ignored disposition survives exec: the workload would never die of SIGPIPE.
    ::sigaction(SIGPIPE, &action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

void remove_at_termination(const std::string& path, const FileId& file) {
    if (path.size() >= kPathBytes) return;
    const TerminationDeferred deferred;
    RemovedFile* entry = slot_of(path);
    for (auto& free : removed_files) {
        if (entry) break;
        if (!free.used) entry = &free;
    }
    if (!entry) return;
    std::memcpy(entry->path.data(), path.c_str(), path.size() + 1);
    entry->file = file;
    entry->used = true;
}

void keep_at_termination(const std::string& path) {
    const TerminationDeferred deferred;
    if (RemovedFile* entry = slot_of(path)) entry->used = false;
}

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
