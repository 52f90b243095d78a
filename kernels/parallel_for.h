// Runs body(i) for i in [0, count) on the machine's cores.  The CPU
// references are what a quick check spends most of its time on; every index
// is still computed by one thread, in the same order, so results do not
// depend on the thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace provision::kernels {

template <typename Body>
void parallel_for(std::size_t count, Body body) {
    const std::size_t workers =
        std::min<std::size_t>({count, std::max(1u, std::thread::hardware_concurrency()), std::size_t{32}});
    if (workers <= 1) {
        for (std::size_t i = 0; i < count; ++i) body(i);
        return;
    }
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            for (std::size_t i = w; i < count; i += workers) body(i);
        });
    for (auto& thread : threads) thread.join();
}

}  // namespace provision::kernels
