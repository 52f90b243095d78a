#include "gpu/visible_devices.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

namespace provision {

namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool looks_like_uuid_text(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c) || c == '-'; });
}

// One entry resolved to a host position, or the reason it is invalid.
struct Resolved {
    std::optional<std::size_t> position;
    std::string problem;
};

Resolved by_uuid_prefix(std::string_view prefix, const std::vector<std::string>& host_uuids) {
    // UUIDs carry "GPU-" and lower-case hex; accept both omissions.
    const std::string wanted = starts_with_ignoring_case(prefix, "GPU-") ? std::string(prefix.substr(4))
                                                                         : std::string(prefix);
    if (!looks_like_uuid_text(wanted)) return {std::nullopt, "is neither a GPU index nor a GPU UUID"};
    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < host_uuids.size(); ++i) {
        const std::string_view uuid = host_uuids[i];
        if (starts_with_ignoring_case(uuid, "GPU-") && starts_with_ignoring_case(uuid.substr(4), wanted))
            matches.push_back(i);
    }
    if (matches.empty()) return {std::nullopt, "matches no GPU on this machine"};
    if (matches.size() > 1)
        return {std::nullopt, fmt::format("matches {} GPUs; give enough of the UUID to name one", matches.size())};
    return {matches.front(), ""};
}

Resolved resolve(std::string_view entry, const std::vector<std::string>& host_uuids) {
    if (entry.empty()) return {std::nullopt, "is empty"};
    if (all_digits(entry)) {
        if (entry.size() > 6 || std::stoul(std::string(entry)) >= host_uuids.size())
            return {std::nullopt, fmt::format("is out of range (this machine has {} GPU{})", host_uuids.size(),
                                              host_uuids.size() == 1 ? "" : "s")};
        return {std::stoul(std::string(entry)), ""};
    }
    if (starts_with_ignoring_case(entry, "MIG-")) {
        const std::string_view rest = entry.substr(4);
        if (!starts_with_ignoring_case(rest, "GPU-"))
            return {std::nullopt, "names a MIG instance, which only libcuda can resolve"};
        return by_uuid_prefix(rest.substr(0, rest.find('/')), host_uuids);
    }
    return by_uuid_prefix(entry, host_uuids);
}

}  // namespace

VisibleDevices select_visible_devices(const std::vector<std::string>& host_uuids,
                                      const std::optional<std::string>& cuda_visible_devices) {
    VisibleDevices visible;
    if (!cuda_visible_devices) {
        for (std::size_t i = 0; i < host_uuids.size(); ++i) visible.positions.push_back(i);
        return visible;
    }
    const std::string_view text = *cuda_visible_devices;
    if (trim(text).empty()) return visible;  // set but empty: no GPU at all

    std::size_t start = 0;
    for (int ordinal = 1;; ++ordinal) {
        const std::size_t comma = text.find(',', start);
        const std::string_view raw = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
        const std::string_view entry = trim(raw);
        Resolved resolved = resolve(entry, host_uuids);
        if (resolved.position &&
            std::find(visible.positions.begin(), visible.positions.end(), *resolved.position) !=
                visible.positions.end())
            resolved = {std::nullopt, "names a GPU that an earlier entry already named"};
        if (!resolved.position) {
            visible.notes.push_back(fmt::format(
                "CUDA_VISIBLE_DEVICES entry {} ('{}') {}; CUDA ignores it and every entry after it", ordinal,
                entry, resolved.problem));
            break;
        }
        if (starts_with_ignoring_case(entry, "MIG-"))
            visible.notes.push_back(fmt::format(
                "CUDA_VISIBLE_DEVICES entry '{}' is a MIG instance of GPU {}; its memory is shown as the whole GPU's",
                entry, host_uuids[*resolved.position]));
        visible.positions.push_back(*resolved.position);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return visible;
}

void apply_visible_devices(const std::vector<Gpu>& host_gpus,
                           const std::optional<std::string>& cuda_visible_devices, Inventory& inventory) {
    std::vector<std::string> uuids;
    for (const auto& gpu : host_gpus) uuids.push_back(gpu.uuid);
    VisibleDevices visible = select_visible_devices(uuids, cuda_visible_devices);
    for (const std::size_t position : visible.positions) {
        Gpu gpu = host_gpus[position];
        gpu.index = static_cast<int>(inventory.gpus.size());
        inventory.gpus.push_back(std::move(gpu));
    }
    inventory.hidden_gpus = static_cast<int>(host_gpus.size() - visible.positions.size());
    for (auto& note : visible.notes) inventory.notes.push_back(std::move(note));
}

}  // namespace provision
