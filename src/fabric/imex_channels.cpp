#include "fabric/imex_channels.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace provision {
namespace {

constexpr std::string_view kName = "nvidia-caps-imex-channels";
constexpr std::size_t kProcDevicesBytes = 64 * 1024;

// "channel10" after "channel9", as ls -v sorts.
bool natural_less(const std::string& a, const std::string& b) {
    const auto split = [](const std::string& name) {
        const auto digits = name.find_last_not_of("0123456789") + 1;
        const std::string tail = name.substr(digits);
        return std::make_pair(name.substr(0, digits), tail.size() > 9 ? ~0ull : tail.empty() ? 0ull : std::stoull(tail));
    };
    return split(a) < split(b) || (split(a) == split(b) && a < b);
}

ImexChannel judge(const std::string& folder, const std::string& name, std::optional<unsigned> major) {
    ImexChannel channel{name, false, {}};
    const std::string path = folder + "/" + name;
    struct stat status {};
    if (stat(path.c_str(), &status) != 0) {
        channel.detail = std::strerror(errno);
        return channel;
    }
    if (!S_ISCHR(status.st_mode)) {
        channel.detail = "not a character device";
        return channel;
    }
    if (major && ::major(status.st_rdev) != *major) {
        channel.detail = fmt::format("major {} is not nvidia-caps-imex-channels' {}", ::major(status.st_rdev), *major);
        return channel;
    }
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        channel.detail = fmt::format("cannot be opened: {}", std::strerror(errno));
        return channel;
    }
    close(fd);
    channel.usable = true;
    return channel;
}

}  // namespace

bool ImexChannels::any_usable() const {
    return std::any_of(channels.begin(), channels.end(), [](const ImexChannel& channel) { return channel.usable; });
}

std::optional<unsigned> imex_major_from_proc_devices(std::string_view text) {
    bool character = false;
    while (!text.empty()) {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (line == "Character devices:") character = true;
        else if (line == "Block devices:") character = false;
        if (!character) continue;
        // "%3d %s": a number, blanks, the name.
        const auto first = line.find_first_not_of(' ');
        if (first == std::string_view::npos) continue;
        line.remove_prefix(first);
        const auto digits = line.find_first_not_of("0123456789");
        if (digits == 0 || digits == std::string_view::npos || digits > 9) continue;
        const auto name_at = line.find_first_not_of(' ', digits);
        if (name_at == digits || name_at == std::string_view::npos || line.substr(name_at) != kName) continue;
        return static_cast<unsigned>(std::stoul(std::string(line.substr(0, digits))));
    }
    return std::nullopt;
}

ImexChannels read_imex_channels(const std::string& proc, const std::string& dev) {
    ImexChannels found;
    std::string why;
    if (const auto text = read_regular_file(proc + "/devices", kProcDevicesBytes, why, /*truncate=*/true))
        found.major = imex_major_from_proc_devices(*text);
    const std::string folder = dev + "/" + std::string(kName);
    std::error_code error;
    std::vector<std::string> names;
    found.folder = std::filesystem::is_directory(folder, error);
    for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("channel", 0) == 0) names.push_back(name);
        if (names.size() > 4 * kMostImexChannels) break;  // a folder of thousands is not read to its end
    }
    std::sort(names.begin(), names.end(), natural_less);
    if (names.size() > kMostImexChannels) {
        found.left_out = names.size() - kMostImexChannels;
        names.resize(kMostImexChannels);
    }
    for (const auto& name : names) found.channels.push_back(judge(folder, name, found.major));
    return found;
}

}  // namespace provision
