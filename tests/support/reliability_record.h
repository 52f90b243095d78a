// One row of docs/RELIABILITY.md, written by the test that proves it.
//
// Tests that inject a fault or feed bad input call record() with what they
// tried and what provision did.  When PROVISION_RELIABILITY_LOG names a file
// (scripts/test sets it), each call appends one tab-separated line there;
// scripts/reliability-table turns the lines into the table.  Without the
// variable, record() does nothing, so the tests run the same either way.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace reliability {

// area:    what kind of fault or input ("driver", "health", "recipe input", "env file", ...)
// input:   what was injected or fed ("NVML init fails: driver/library version mismatch")
// outcome: what provision did, as the test asserted it ("exit 0, CPU-only, eager; note names the mismatch")
// lost:    what was lost ("nothing", or what)
inline void record(std::string_view area, std::string_view input, std::string_view outcome,
                   std::string_view lost = "nothing") {
    const char* log = std::getenv("PROVISION_RELIABILITY_LOG");
    if (log == nullptr || *log == '\0') return;
    auto clean = [](std::string_view text) {
        std::string out(text);
        for (char& c : out)
            if (c == '\t' || c == '\n' || c == '\r') c = ' ';
        return out;
    };
    const std::string line =
        clean(area) + "\t" + clean(input) + "\t" + clean(outcome) + "\t" + clean(lost) + "\n";
    // One write() on an O_APPEND descriptor: lines from parallel tests never interleave.
    const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    [[maybe_unused]] const auto written = ::write(fd, line.data(), line.size());
    ::close(fd);
}

}  // namespace reliability
