// Where the ELF files built from tests/native/ are, and small helpers to
// make malformed ones from them.
#pragma once

#include <elf.h>

#include <cstring>
#include <memory>
#include <string>

#include "native/byte_source.h"
#include "test_support.h"

namespace native_test {

inline std::string data_path(const std::string& relative) {
    return std::string(PROVISION_NATIVE_TEST_DATA) + "/" + relative;
}

constexpr bool have_cuda_data = PROVISION_NATIVE_HAVE_CUDA_DATA != 0;

inline std::shared_ptr<const provision::native::MemorySource> in_memory(std::string bytes,
                                                                        std::string name = "memory.so") {
    return std::make_shared<provision::native::MemorySource>(std::move(bytes), std::move(name));
}

// Overwrites sizeof(T) bytes at `offset` of `bytes` with `value`.
template <typename T>
void poke(std::string& bytes, std::size_t offset, T value) {
    REQUIRE(offset + sizeof value <= bytes.size());
    std::memcpy(bytes.data() + offset, &value, sizeof value);
}

}  // namespace native_test
