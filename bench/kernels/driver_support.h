// What the kernel drivers of bench/ share: GPU 0 set up with a stream and
// CUDA failures reported by name, and event-timed launches.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "cuda_support.h"

namespace provision::bench {

// The drivers' command line, `NAME test` or `NAME bench [ARG...]`:
// test(stream) or bench(stream, args) on GPU 0.  A CUDA failure or another
// exception is printed after the name and gives exit status 2, as does a
// command line that is neither.
template <typename Test, typename Bench>
int driver_main(int argc, char** argv, const char* usage, Test&& test, Bench&& bench) {
    using namespace provision::kernels::detail;
    const char* name = argv[0];
    const std::string mode = argc > 1 ? argv[1] : "test";
    if (mode != "test" && mode != "bench") {
        fmt::print(stderr, "usage: {} {}\n", name, usage);
        return 2;
    }
    try {
        check_cuda(cudaSetDevice(0), "cudaSetDevice");
        Stream stream;
        return mode == "test" ? test(stream) : bench(stream, std::vector<std::string>(argv + std::min(argc, 2), argv + argc));
    } catch (const CudaFailure& failure) {
        fmt::print(stderr, "{}: {}\n", name, describe_cuda_failure(failure, 0));
    } catch (const std::exception& failure) {
        fmt::print(stderr, "{}: {}\n", name, failure.what());
    }
    return 2;
}

// `warmup` untimed launches, then `runs` timed ones, each between its own
// pair of events; launch(i) gets the launch's number (to rotate input
// sets).  The times in ms, sorted.
template <typename Launch>
std::vector<double> time_launches(const kernels::detail::Stream& stream, int warmup, int runs, Launch&& launch) {
    for (int i = 0; i < warmup; ++i) launch(i);
    std::vector<double> times;
    kernels::detail::EventTimer timer;
    for (int i = 0; i < runs; ++i) {
        timer.start(stream.get());
        launch(i);
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    std::sort(times.begin(), times.end());
    return times;
}

}  // namespace provision::bench
