// The device memory helpers of kernels/cuda_support.h: a download takes a
// whole span, and refuses one that is no whole number of its elements
// rather than copy past the host buffer's end.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cuda_support.h"
#include "cuda_test_support.h"

using namespace provision::kernels;
using namespace provision::kernels::detail;

TEST_CASE("a download takes the whole span and refuses one of another size", "[gpu]") {
    const auto device = provision::gpu_tests::current_device_or_skip();
    if (!device) return;
    const Stream stream;
    DeviceBuffer buffer(10);
    const std::vector<std::uint8_t> bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    buffer.upload(bytes, stream.get());
    CHECK(buffer.download<std::uint8_t>(stream.get()) == bytes);
    const auto halves = buffer.download<std::uint16_t>(stream.get());
    REQUIRE(halves.size() == 5);
    CHECK(halves[4] == (10 << 8 | 9));  // little-endian
    CHECK_THROWS_AS(buffer.download<float>(stream.get()), std::logic_error);  // 10 bytes are 2.5 floats
    std::vector<std::uint8_t> short_buffer(9);
    CHECK_THROWS_AS(buffer.span().download_into(short_buffer, stream.get()), std::logic_error);
}
