#include "gpu/visible_devices.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace provision {

namespace {

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

enum class EntryKind { index, uuid };

// One entry resolved to a host position, or the reason CUDA stops there.
struct Resolved {
    std::optional<std::size_t> position;
    EntryKind kind = EntryKind::index;
    std::string problem;
};

// "GPU-" (case as written) and then the rest of the entry, compared with
// each host UUID character by character (hex in either case) up to the
// UUID's end: a shorter entry is a prefix, and what follows a whole UUID is
// ignored ("GPU-<uuid> ", "GPU-<uuid>-extra"), but a character that differs
// within the UUID's length matches nothing ("GPU-8932f9zz"), as CUDA reads it.
Resolved by_uuid_prefix(std::string_view entry, const std::vector<std::string>& host_uuids) {
    const std::string_view wanted = entry.substr(4);
    if (wanted.empty()) return {std::nullopt, EntryKind::uuid, "has no UUID after 'GPU-'"};
    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < host_uuids.size(); ++i) {
        const std::string_view uuid = host_uuids[i];
        if (!starts_with_ignoring_case(uuid, "GPU-")) continue;
        const std::string_view digits = uuid.substr(4);
        if (starts_with_ignoring_case(digits, wanted.substr(0, std::min(wanted.size(), digits.size()))))
            matches.push_back(i);
    }
    if (matches.empty()) return {std::nullopt, EntryKind::uuid, "matches no GPU on this machine"};
    if (matches.size() > 1)
        return {std::nullopt, EntryKind::uuid,
                fmt::format("matches {} GPUs; give enough of the UUID to name one", matches.size())};
    return {matches.front(), EntryKind::uuid, ""};
}

// An index as CUDA reads it: strtoul's rules (leading blanks, a sign, the
// digits up to the first other character) and then cut to 32 bits, so
// "0a", "+0" and "4294967296" all name GPU 0, while "-1" names none.
Resolved by_index(std::string_view entry, std::size_t host_count) {
    const std::string text(entry);
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (end == text.c_str()) return {std::nullopt, EntryKind::index, "is neither a GPU index nor a GPU UUID"};
    const auto index = static_cast<std::uint32_t>(errno == ERANGE ? ~0ull : value);
    if (index >= host_count)
        return {std::nullopt, EntryKind::index,
                fmt::format("is out of range (this machine has {} GPU{})", host_count, host_count == 1 ? "" : "s")};
    return {index, EntryKind::index, ""};
}

Resolved resolve(std::string_view entry, const std::vector<std::string>& host_uuids) {
    if (entry.starts_with("MIG-"))
        return {std::nullopt, EntryKind::uuid, "names a MIG instance, which only libcuda can resolve"};
    if (entry.starts_with("GPU-")) return by_uuid_prefix(entry, host_uuids);
    return by_index(entry, host_uuids.size());
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
    std::vector<EntryKind> kinds;  // how each kept position was named
    std::size_t start = 0;
    for (int ordinal = 1;; ++ordinal) {
        const std::size_t comma = text.find(',', start);
        const std::string_view entry = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
        const Resolved resolved = resolve(entry, host_uuids);
        if (!resolved.position) {
            visible.notes.push_back(fmt::format(
                "CUDA_VISIBLE_DEVICES entry {} ('{}') {}; CUDA ignores it and every entry after it", ordinal, entry,
                entry.empty() ? "is empty" : resolved.problem));
            break;
        }
        const auto earlier = std::find(visible.positions.begin(), visible.positions.end(), *resolved.position);
        if (earlier != visible.positions.end()) {
            // Measured: the same GPU named twice the same way makes cuInit
            // fail (CUDA_ERROR_INVALID_DEVICE); once by index and once by
            // UUID, CUDA keeps it once.
            if (kinds[static_cast<std::size_t>(earlier - visible.positions.begin())] == resolved.kind) {
                visible.positions.clear();
                visible.notes.push_back(fmt::format(
                    "CUDA_VISIBLE_DEVICES entry {} ('{}') names a GPU that an earlier entry already named the same "
                    "way: CUDA then fails to start (invalid device) and the workload will see no GPU",
                    ordinal, entry));
                return visible;
            }
        } else {
            visible.positions.push_back(*resolved.position);
            kinds.push_back(resolved.kind);
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    if (visible.positions.empty() && !host_uuids.empty())
        visible.notes.push_back(fmt::format("CUDA_VISIBLE_DEVICES='{}' leaves the workload no GPU", text));
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
