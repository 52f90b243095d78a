// Telling provision's own processes (its GPU workers) from the others.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/own_executable.h"

using provision::runs_this_executable;

namespace {

// A child that stays until killed, optionally after exec'ing `program`.
pid_t child(const char* program) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (program) ::execl(program, program, "30", static_cast<char*>(nullptr));
        ::pause();
        ::_exit(0);
    }
    return pid;
}

void stop(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

}  // namespace

TEST_CASE("runs_this_executable: this process and a fork of it, not another program") {
    CHECK(runs_this_executable(::getpid()));
    const pid_t same = child(nullptr);
    REQUIRE(same > 0);
    CHECK(runs_this_executable(same));
    stop(same);
    const pid_t other = child("/bin/sleep");
    REQUIRE(other > 0);
    // Until the exec has happened the child still runs this executable.
    bool replaced = false;
    for (int i = 0; i < 500 && !replaced; ++i) {
        replaced = !runs_this_executable(other);
        if (!replaced) ::usleep(10000);
    }
    CHECK(replaced);
    stop(other);
}

TEST_CASE("runs_this_executable: no process, or none here, is not ours") {
    CHECK_FALSE(runs_this_executable(0));
    CHECK_FALSE(runs_this_executable(-1));
    CHECK_FALSE(runs_this_executable(0x7ffff000));  // above any pid_max
}
