// A GPU's PCIe link as Linux reads it from the device's own registers:
// /sys/bus/pci/devices/<bus id>/{current,max}_link_{speed,width}.  The
// validation worker reads it right after its host copies, while the link is
// busy (an idle link trains down to a lower generation to save power), and
// needs no NVML for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpu/gpu_links.h"

namespace provision {

// "32.0 GT/s PCIe" (or "32.0 GT/s") -> 5; nullopt for anything else
// ("Unknown", "2.5 GT/s" is 1, ... "64.0 GT/s" is 6).
std::optional<unsigned> pcie_generation_of(std::string_view speed);

// All four figures, or nullopt where any is missing or unreadable.
std::optional<PcieLink> read_pcie_link(const std::string& bus_id, const std::string& devices = "/sys/bus/pci/devices");

// The same, where the device at `bus_id` is NVIDIA's (its vendor 0x10de), so
// that an id that names another device there (a container's own view, a
// test's fake GPU) is never read as the GPU's.
std::optional<PcieLink> read_nvidia_pcie_link(const std::string& bus_id,
                                              const std::string& devices = "/sys/bus/pci/devices");

}  // namespace provision
