// The one rule for what a bounded reader keeps (src/core/bounded_keep.h),
// and the natural order folders are sorted in before it applies.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/bounded_keep.h"
#include "core/text.h"

using namespace provision;

TEST_CASE("bounded keep: every marked item, the first or newest of the rest, in the order offered", "[core]") {
    SECTION("the newest of the rest") {
        BoundedKeep<int> keep({2, 3, KeepEnd::newest});
        for (int i = 0; i < 10; ++i) keep.offer(i, i == 1 || i == 4);
        CHECK(keep.offered() == 10);
        CHECK(keep.left_out() == 5);
        CHECK(keep.take() == std::vector<int>{1, 4, 7, 8, 9});
    }
    SECTION("the first of the rest; marked items past their cap compete with the rest") {
        BoundedKeep<int> keep({1, 2, KeepEnd::first});
        for (int i = 0; i < 10; ++i) keep.offer(i, i >= 5);
        CHECK(keep.left_out() == 7);
        CHECK(keep.take() == std::vector<int>{0, 1, 5});
    }
    SECTION("within the bounds nothing is left out") {
        BoundedKeep<std::string> keep({0, 4, KeepEnd::first});
        for (const char* name : {"a", "b", "c"}) keep.offer(name, false);
        CHECK(keep.left_out() == 0);
        CHECK(keep.take() == std::vector<std::string>{"a", "b", "c"});
    }
}

TEST_CASE("natural order: a run of digits compares by its value", "[core]") {
    std::vector<std::string> names = {"mlx5_10", "mlx5_2", "mlx5_1", "ib0", "mlx5_0", "eth10", "eth9", "mlx4_0"};
    std::sort(names.begin(), names.end(),
              [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    CHECK(names == std::vector<std::string>{"eth9", "eth10", "ib0", "mlx4_0", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10"});
    CHECK(natural_less("1", "01"));
    CHECK_FALSE(natural_less("01", "1"));
    CHECK_FALSE(natural_less("a", "a"));
    CHECK(natural_less("a", "a0"));
    CHECK(natural_less("9", "10"));
    CHECK(natural_less(std::string(30, '9'), "1" + std::string(30, '0')));  // past any integer type
}
