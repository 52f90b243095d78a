#include "gpu/pcie_sysfs.h"

#include <charconv>

#include "core/regular_file.h"
#include "core/text.h"

namespace provision {
namespace {

// Transfer rates per lane of each generation, in GT/s (PCI-SIG: 2.5, 5, 8,
// 16, 32, 64).
constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};

std::optional<std::string> attribute(const std::string& folder, const char* name) {
    std::string error;
    auto text = read_regular_file(folder + "/" + name, 64, error, true);
    if (!text) return std::nullopt;
    return trimmed(*text);
}

std::optional<unsigned> number(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value == 0) return std::nullopt;
    return value;
}

// The device's folder under `devices`, or nullopt where the bus id would
// name a path out of it.
std::optional<std::string> device_folder(const std::string& bus_id, const std::string& devices) {
    if (bus_id.empty() || bus_id == "." || bus_id == ".." || bus_id.find('/') != std::string::npos) return std::nullopt;
    return devices + "/" + lowercase(bus_id);
}

// The four figures in a device's folder, or nullopt where any is missing.
std::optional<PcieLink> link_in(const std::string& folder) {
    const auto current = attribute(folder, "current_link_speed");
    const auto maximum = attribute(folder, "max_link_speed");
    const auto generation = current ? pcie_generation_of(*current) : std::nullopt;
    const auto max_generation = maximum ? pcie_generation_of(*maximum) : std::nullopt;
    const auto width = number(attribute(folder, "current_link_width"));
    const auto max_width = number(attribute(folder, "max_link_width"));
    if (!generation || !max_generation || !width || !max_width) return std::nullopt;
    return PcieLink{*generation, *width, *max_generation, *max_width};
}

}  // namespace

std::optional<unsigned> pcie_generation_of(std::string_view speed) {
    const auto gts = speed.find(" GT/s");
    if (gts == std::string_view::npos) return std::nullopt;
    double rate = 0;
    const auto [end, ec] = std::from_chars(speed.data(), speed.data() + gts, rate);
    if (ec != std::errc() || end != speed.data() + gts) return std::nullopt;
    for (unsigned generation = 0; generation < std::size(kRates); ++generation)
        if (rate > kRates[generation] - 0.05 && rate < kRates[generation] + 0.05) return generation + 1;
    return std::nullopt;
}

std::optional<PcieLink> read_pcie_link(const std::string& bus_id, const std::string& devices) {
    const auto folder = device_folder(bus_id, devices);
    return folder ? link_in(*folder) : std::nullopt;
}

std::optional<PcieLink> read_nvidia_pcie_link(const std::string& bus_id, const std::string& devices) {
    const auto folder = device_folder(bus_id, devices);
    if (!folder || attribute(*folder, "vendor") != "0x10de") return std::nullopt;
    return link_in(*folder);
}

}  // namespace provision
