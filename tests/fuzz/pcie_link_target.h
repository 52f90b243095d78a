// Fuzz target: a GPU's PCIe link as sysfs gives it (src/gpu/pcie_sysfs.h),
// the files a container's /sys holds.  The input is up to six lines: the
// device's vendor, current and maximum link speed, current and maximum
// width (each written to its attribute file in a folder of its own), and
// the bus id asked for (default: the device written).  Beyond "no crash, no
// sanitizer report" it checks that a link is only read for the device
// written and only where it is NVIDIA's, that every figure it gives is in
// range, and that the NVIDIA reading is the plain reading of the same device.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "core/text.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/version_target.h"
#include "gpu/pcie_sysfs.h"

namespace fuzz::pcie_link {

inline constexpr const char* kBusId = "0000:1b:00.0";

// A devices folder of this process's own, removed when the process ends.
class DevicesFolder {
public:
    DevicesFolder()
        : root_(std::filesystem::temp_directory_path() / ("provision-fuzz-pcie-" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(root_ / kBusId);
    }
    ~DevicesFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
    DevicesFolder(const DevicesFolder&) = delete;
    DevicesFolder& operator=(const DevicesFolder&) = delete;

    std::string path() const { return root_.string(); }
    void write(const char* attribute, std::string_view text) const {
        std::ofstream(root_ / kBusId / attribute, std::ios::binary | std::ios::trunc)
            .write(text.data(), static_cast<std::streamsize>(text.size()));
    }

private:
    std::filesystem::path root_;
};

inline void one_input(std::string_view input) {
    static const DevicesFolder devices;
    const auto lines = fuzz::version::split_lines(input, 6);
    auto line = [&](std::size_t i) { return i < lines.size() ? lines[i] : std::string_view(); };
    const char* attributes[] = {"vendor", "current_link_speed", "max_link_speed", "current_link_width",
                                "max_link_width"};
    for (std::size_t i = 0; i < std::size(attributes); ++i) devices.write(attributes[i], line(i));
    const std::string bus_id = lines.size() > 5 ? std::string(line(5)) : std::string(kBusId);

    for (std::size_t i = 1; i <= 2; ++i)
        if (const auto generation = provision::pcie_generation_of(line(i)))
            FUZZ_CHECK(*generation >= 1 && *generation <= 6 && line(i).find(" GT/s") != std::string_view::npos);

    const auto plain = provision::read_pcie_link(bus_id, devices.path());
    const auto nvidia = provision::read_nvidia_pcie_link(bus_id, devices.path());
    if (plain) {
        FUZZ_CHECK(provision::lowercase(bus_id) == kBusId);  // never a path out of the folder
        FUZZ_CHECK(plain->generation >= 1 && plain->generation <= 6);
        FUZZ_CHECK(plain->max_generation >= 1 && plain->max_generation <= 6);
        FUZZ_CHECK(plain->width > 0 && plain->max_width > 0);
    }
    if (nvidia) {
        FUZZ_CHECK(plain && *nvidia == *plain);
        // Attributes are read up to 64 bytes; a vendor that short is judged whole.
        if (line(0).size() <= 64) FUZZ_CHECK(provision::trimmed(line(0)) == "0x10de");
    } else if (plain && line(0).size() <= 64) {
        FUZZ_CHECK(provision::trimmed(line(0)) != "0x10de");
    }
}

}  // namespace fuzz::pcie_link
