#include <catch2/catch.hpp>

#include "gpu/inventory.h"

using provision::ComputeCapability;

TEST_CASE("ComputeCapability::parse reads MAJOR.MINOR", "[gpu]") {
    CHECK(ComputeCapability::parse("9.0") == ComputeCapability{9, 0});
    CHECK(ComputeCapability::parse("10.3") == ComputeCapability{10, 3});
    CHECK(ComputeCapability::parse("12.1") == ComputeCapability{12, 1});
    CHECK(ComputeCapability::parse("3.7") == ComputeCapability{3, 7});
}

TEST_CASE("ComputeCapability::parse rejects everything else", "[gpu]") {
    for (const char* text : {"", "9", "9.", ".0", "9.0.1", "sm_90", "9.x", "-9.0", "+9.0", " 9.0", "9.0 ", "9,0",
                             "1000.0", "9.0a"}) {
        INFO("text: '" << text << "'");
        CHECK_FALSE(ComputeCapability::parse(text).has_value());
    }
}

TEST_CASE("ComputeCapability orders by major, then minor, and prints back", "[gpu]") {
    CHECK(ComputeCapability{8, 9} < ComputeCapability{9, 0});
    CHECK(ComputeCapability{10, 0} > ComputeCapability{9, 0});
    CHECK(ComputeCapability{12, 0} < ComputeCapability{12, 1});
    CHECK(ComputeCapability{10, 3}.str() == "10.3");
    CHECK(ComputeCapability::parse(ComputeCapability{11, 0}.str()) == ComputeCapability{11, 0});
}
