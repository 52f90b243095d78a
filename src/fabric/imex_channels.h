// IMEX in the container, as CUDA needs it for fabric memory (cuda.h,
// cuMemCreate's notes): `nvidia-caps-imex-channels` listed in /proc/devices,
// and a channel device /dev/nvidia-caps-imex-channels/channelN of that major
// this process can open.  Without one, memory with a fabric handle fails with
// CUDA error 800 (operation not permitted).  The roots are replaceable
// (PROVISION_TEST_PROC, PROVISION_TEST_DEV in test builds).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

struct ImexChannel {
    std::string name;       // "channel0"
    bool usable = false;    // a character device of the listed major, opened read-write
    std::string detail;     // why not usable
};

struct ImexChannels {
    std::optional<unsigned> major;      // nvidia-caps-imex-channels in /proc/devices; nullopt: not listed
    bool folder = false;                // /dev/nvidia-caps-imex-channels exists
    std::vector<ImexChannel> channels;  // by name in natural order, at most kMostChannels
    std::size_t left_out = 0;           // channel files beyond the bound

    bool any_usable() const;
};

inline constexpr std::size_t kMostImexChannels = 64;

// The major /proc/devices gives `nvidia-caps-imex-channels` under its
// "Character devices:" heading; nullopt when not listed.  Pure: any text.
std::optional<unsigned> imex_major_from_proc_devices(std::string_view text);

// Reads `<proc>/devices` (at most 64 KiB) and `<dev>/nvidia-caps-imex-channels/`.
ImexChannels read_imex_channels(const std::string& proc, const std::string& dev);

}  // namespace provision
