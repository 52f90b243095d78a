// How a run tells provision's GPU workers from the processes sharing a GPU.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/gpu_worker_name.h"

using namespace provision;

TEST_CASE("a process that named itself provision's GPU worker is one; others are not") {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t worker = ::fork();
    if (worker == 0) {
        name_this_process_as_gpu_worker();
        (void)!::write(ready[1], "x", 1);
        for (;;) ::pause();
    }
    REQUIRE(worker > 0);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    CHECK(is_gpu_worker_process(worker));
    CHECK_FALSE(is_gpu_worker_process(::getpid()));  // the test binary keeps its own name
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
    CHECK_FALSE(is_gpu_worker_process(worker));  // reaped: no such process
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST_CASE("no process, or none visible here, is a worker") {
    CHECK_FALSE(is_gpu_worker_process(0));
    CHECK_FALSE(is_gpu_worker_process(-1));
    CHECK_FALSE(is_gpu_worker_process(0x7ffff000));  // above any pid_max
}
