#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "worker/background_priority.h"

using namespace provision;

namespace {

int nice_of_this_thread() {
    errno = 0;
    return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

}  // namespace

TEST_CASE("a host half's thread runs at the least priority, and the threads it starts too, the rest as they were",
          "[worker]") {
    const int before = nice_of_this_thread();
    int lowered = -100, inherited = -100;
    bool accepted = false;
    std::thread host_half([&] {
        accepted = lower_this_thread_priority();
        lowered = nice_of_this_thread();
        std::thread helper([&] { inherited = nice_of_this_thread(); });
        helper.join();
    });
    host_half.join();
    REQUIRE(accepted);
    CHECK(lowered == 19);
    CHECK(inherited == 19);
    CHECK(nice_of_this_thread() == before);
}
