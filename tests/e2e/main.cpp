// The end-to-end tests' main: Catch2, or the measured run's helper
// (harness.h, kMeasuredRun) when the harness starts this binary as one.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "harness.h"

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], e2e::kMeasuredRun) == 0) return e2e::measured_run_main(argc, argv);
    // The reports this run makes provision print, and no earlier run's.
    if (const char* log = std::getenv("PROVISION_E2E_REPORT_LOG"); log && *log) std::ofstream(log, std::ios::trunc);
    return Catch::Session().run(argc, argv);
}
