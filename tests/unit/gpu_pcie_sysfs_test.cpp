#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "gpu/pcie_sysfs.h"
#include "test_support.h"

using namespace provision;
namespace fs = std::filesystem;

TEST_CASE("PCIe link speeds name their generation", "[gpu][pcie]") {
    CHECK(pcie_generation_of("2.5 GT/s PCIe") == 1u);
    CHECK(pcie_generation_of("5.0 GT/s PCIe") == 2u);
    CHECK(pcie_generation_of("8.0 GT/s PCIe") == 3u);
    CHECK(pcie_generation_of("16.0 GT/s PCIe") == 4u);
    CHECK(pcie_generation_of("32.0 GT/s PCIe") == 5u);
    CHECK(pcie_generation_of("64.0 GT/s PCIe") == 6u);
    CHECK(pcie_generation_of("32.0 GT/s") == 5u);  // older kernels
    CHECK_FALSE(pcie_generation_of("Unknown"));
    CHECK_FALSE(pcie_generation_of("12.0 GT/s PCIe"));
    CHECK_FALSE(pcie_generation_of(""));
}

namespace {

void write_attribute(const fs::path& device, const char* name, const std::string& text) {
    std::ofstream(device / name) << text << "\n";
}

// A device folder at root/0000:1b:00.0 with the link's four attributes.
fs::path device_with_link(const fs::path& root, const std::string& speed, const std::string& max_speed,
                          const std::string& width, const std::string& max_width) {
    const fs::path device = root / "0000:1b:00.0";
    fs::create_directories(device);
    write_attribute(device, "current_link_speed", speed);
    write_attribute(device, "max_link_speed", max_speed);
    write_attribute(device, "current_link_width", width);
    write_attribute(device, "max_link_width", max_width);
    return device;
}

}  // namespace

TEST_CASE("a device's PCIe link is read from sysfs, all four figures or none", "[gpu][pcie]") {
    const fs::path root = fs::temp_directory_path() / ("provision-sysfs-" + std::to_string(::getpid()));
    const fs::path device = device_with_link(root, "16.0 GT/s PCIe", "32.0 GT/s PCIe", "8", "16");
    // CUDA writes the bus id in capitals.
    const auto link = read_pcie_link("0000:1B:00.0", root.string());
    REQUIRE(link);
    CHECK(*link == PcieLink{4, 8, 5, 16});
    write_attribute(device, "current_link_width", "0");
    CHECK_FALSE(read_pcie_link("0000:1b:00.0", root.string()));
    CHECK_FALSE(read_pcie_link("0000:00:00.0", root.string()));  // no such device
    CHECK_FALSE(read_pcie_link("../../etc", root.string()));
    fs::remove_all(root);
}

TEST_CASE("a GPU's PCIe link is read from sysfs only where the device there is NVIDIA's", "[gpu][pcie]") {
    const fs::path root = fs::temp_directory_path() / ("provision-sysfs-vendor-" + std::to_string(::getpid()));
    const fs::path device = device_with_link(root, "32.0 GT/s PCIe", "32.0 GT/s PCIe", "16", "16");
    CHECK_FALSE(read_nvidia_pcie_link("0000:1b:00.0", root.string()));  // no vendor file
    write_attribute(device, "vendor", "0x8086");  // another device at the id NVML gave (a test's fake GPU)
    CHECK_FALSE(read_nvidia_pcie_link("0000:1b:00.0", root.string()));
    write_attribute(device, "vendor", "0x10de");
    const auto link = read_nvidia_pcie_link("0000:1B:00.0", root.string());
    REQUIRE(link);
    CHECK(*link == PcieLink{5, 16, 5, 16});
    CHECK_FALSE(read_nvidia_pcie_link("../0000:1b:00.0", root.string()));
    fs::remove_all(root);
}

TEST_CASE("a bus id of \".\" or \"..\" names no device, whatever the folders hold", "[gpu][pcie]") {
    // Link attributes in the devices folder itself and in the one above it.
    const fs::path above = fs::temp_directory_path() / ("provision-sysfs-dots-" + std::to_string(::getpid()));
    const fs::path devices = device_with_link(above, "32.0 GT/s PCIe", "32.0 GT/s PCIe", "16", "16");
    device_with_link(devices, "32.0 GT/s PCIe", "32.0 GT/s PCIe", "16", "16");
    for (const fs::path& folder : {above, devices})
        for (const char* name : {"current_link_speed", "max_link_speed", "current_link_width", "max_link_width"})
            fs::copy_file(devices / "0000:1b:00.0" / name, folder / name, fs::copy_options::overwrite_existing);
    write_attribute(above, "vendor", "0x10de");
    write_attribute(devices, "vendor", "0x10de");
    CHECK(read_pcie_link("0000:1b:00.0", devices.string()));
    CHECK_FALSE(read_pcie_link(".", devices.string()));
    CHECK_FALSE(read_pcie_link("..", devices.string()));
    CHECK_FALSE(read_nvidia_pcie_link(".", devices.string()));
    CHECK_FALSE(read_nvidia_pcie_link("..", devices.string()));
    fs::remove_all(above);
}
