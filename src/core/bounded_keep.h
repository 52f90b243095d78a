// Which items a reader keeps when its input holds more than it may: one
// rule for every reader that stops at a bound (the kernel's log, RDMA
// devices and ports, network interfaces), so that what is left out is
// never an accident of the order the input came in.
//
// Every item the reader marks as one that matters is kept, up to
// `most_marked`; of the others (and marked items past that cap) the first
// or the newest `most_others` in the order offered.  Kept items come back
// in the order offered, and what was left out is counted so the reader can
// say so.  Memory is bounded by the two caps whatever is offered.
#pragma once

#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

namespace provision {

enum class KeepEnd { first, newest };

struct KeepRule {
    std::size_t most_marked = 0;
    std::size_t most_others = 0;
    KeepEnd others = KeepEnd::first;
};

template <typename T>
class BoundedKeep {
public:
    explicit BoundedKeep(KeepRule rule) : rule_(rule) {}

    void offer(T item, bool marked) {
        ++offered_;
        if (marked && marked_.size() < rule_.most_marked) {
            marked_.emplace_back(offered_, std::move(item));
            return;
        }
        if (others_.size() < rule_.most_others) {
            others_.emplace_back(offered_, std::move(item));
            return;
        }
        ++left_out_;
        if (rule_.others == KeepEnd::newest && !others_.empty()) {
            others_.pop_front();
            others_.emplace_back(offered_, std::move(item));
        }
    }

    std::size_t offered() const { return offered_; }
    std::size_t left_out() const { return left_out_; }

    // The kept items in the order offered.
    std::vector<T> kept() const {
        std::vector<T> items;
        items.reserve(marked_.size() + others_.size());
        auto marked = marked_.begin(), others = others_.begin();
        while (marked != marked_.end() || others != others_.end()) {
            const bool from_marked =
                others == others_.end() || (marked != marked_.end() && marked->first < others->first);
            items.push_back(from_marked ? (marked++)->second : (others++)->second);
        }
        return items;
    }

    // The same, for a reader done offering; the keeper is empty afterwards.
    std::vector<T> take() {
        std::vector<T> items = kept();
        marked_.clear();
        others_.clear();
        return items;
    }

private:
    KeepRule rule_;
    std::deque<std::pair<std::size_t, T>> marked_;  // (order offered, item)
    std::deque<std::pair<std::size_t, T>> others_;
    std::size_t offered_ = 0;
    std::size_t left_out_ = 0;
};

}  // namespace provision
