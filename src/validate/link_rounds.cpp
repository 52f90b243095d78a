#include "validate/link_rounds.h"

#include <algorithm>
#include <set>

namespace provision {

std::vector<std::vector<GpuIndexPair>> link_rounds(const std::vector<GpuIndexPair>& pairs) {
    std::set<GpuIndexPair> wanted;
    std::set<int> gpus;
    for (auto [a, b] : pairs) {
        if (a == b) continue;
        wanted.insert({std::min(a, b), std::max(a, b)});
        gpus.insert(a);
        gpus.insert(b);
    }
    std::vector<int> circle(gpus.begin(), gpus.end());
    if (circle.size() % 2 == 1) circle.push_back(-1);  // a bye
    const std::size_t n = circle.size();
    std::vector<std::vector<GpuIndexPair>> rounds;
    for (std::size_t round = 0; round + 1 < n; ++round) {
        std::vector<GpuIndexPair> this_round;
        for (std::size_t i = 0; i < n / 2; ++i) {
            const int a = circle[i], b = circle[n - 1 - i];
            if (a < 0 || b < 0) continue;
            const GpuIndexPair pair{std::min(a, b), std::max(a, b)};
            if (wanted.erase(pair)) this_round.push_back(pair);
        }
        if (!this_round.empty()) rounds.push_back(std::move(this_round));
        // The first stays; the others turn one place.
        std::rotate(circle.begin() + 1, circle.end() - 1, circle.end());
    }
    return rounds;
}

}  // namespace provision
