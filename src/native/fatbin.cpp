#include "native/fatbin.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace provision::native {

namespace {

constexpr std::uint32_t container_magic = 0xBA55ED50;
constexpr std::size_t container_header_size = 16;
// Entry header fields up to and including `flags`; real headers are 0x40
// bytes or longer.
constexpr std::size_t entry_header_read = 64;
constexpr std::uint16_t kind_ptx = 1;
constexpr std::uint16_t kind_elf = 2;
constexpr std::uint64_t flag_arch_specific = 0x100000;
constexpr std::uint64_t flag_family = 0x200000;
// How far ahead the search for the next container reads at a time.
constexpr std::size_t scan_chunk = 64 * 1024;

template <typename T>
T load(const unsigned char* bytes) {
    T value;
    std::memcpy(&value, bytes, sizeof value);
    return value;
}

ReadError malformed(const ByteSource& source, std::uint64_t at, std::string_view what) {
    return ReadError{ReadErrorKind::malformed,
                     fmt::format("{}: malformed fatbinary at byte {}: {}", source.name(), at, what)};
}

// The section-relative position of the next container magic at 8-byte
// alignment at or after `from`, or `size` when there is none.
ReadResult<std::uint64_t> next_container(const ByteSource& source, std::uint64_t offset, std::uint64_t size,
                                         std::uint64_t from) {
    from = (from + 7) & ~std::uint64_t{7};
    std::vector<unsigned char> chunk;
    while (from + 4 <= size) {
        const std::uint64_t length = std::min<std::uint64_t>(scan_chunk, size - from);
        chunk.resize(length);
        if (!source.read_at(offset + from, chunk.data(), length)) return malformed(source, from, "cannot be read");
        for (std::uint64_t at = 0; at + 4 <= length; at += 8)
            if (load<std::uint32_t>(chunk.data() + at) == container_magic) return from + at;
        from += length;  // length is a multiple of 8 unless it reaches the end
    }
    return size;
}

ArchVariant variant_of(std::uint64_t flags) {
    if (flags & flag_arch_specific) return ArchVariant::arch_specific;
    if (flags & flag_family) return ArchVariant::family;
    return ArchVariant::plain;
}

}  // namespace

std::string Target::str() const {
    const char* suffix = variant == ArchVariant::arch_specific ? "a" : variant == ArchVariant::family ? "f" : "";
    return fmt::format("{}_{}{}", kind == CodeKind::sass ? "sm" : "compute", arch, suffix);
}

std::string Target::capability_str() const {
    const char* suffix = variant == ArchVariant::arch_specific ? "a" : variant == ArchVariant::family ? "f" : "";
    return fmt::format("{}.{}{}", major(), minor(), suffix);
}

ReadResult<FatbinSummary> read_fatbin(const ByteSource& source, std::uint64_t offset, std::uint64_t size) {
    if (!within(offset, size, source.size()))
        return ReadError{ReadErrorKind::malformed, fmt::format("{}: the fatbinary lies outside the file", source.name())};
    FatbinSummary summary;
    std::map<std::vector<Target>, std::size_t> sets;
    auto found = next_container(source, offset, size, 0);
    if (!found) return found.error();
    summary.skipped_bytes += *found;
    std::uint64_t position = *found;
    while (position < size) {
        if (!within(position, container_header_size, size))
            return malformed(source, position, "a container header is cut off");
        unsigned char header[container_header_size];
        if (!source.read_at(offset + position, header, sizeof header))
            return malformed(source, position, "cannot be read");
        const std::uint16_t header_size = load<std::uint16_t>(header + 6);
        const std::uint64_t fat_size = load<std::uint64_t>(header + 8);
        if (header_size < container_header_size || !within(position + header_size, 0, size) ||
            !within(position + header_size, fat_size, size))
            return malformed(source, position, "a container is larger than its section");
        const std::uint64_t end = position + header_size + fat_size;

        std::set<Target> targets;
        std::uint64_t entry = position + header_size;
        while (entry + entry_header_read <= end) {
            unsigned char fields[entry_header_read];
            if (!source.read_at(offset + entry, fields, sizeof fields)) return malformed(source, entry, "cannot be read");
            const std::uint16_t kind = load<std::uint16_t>(fields + 0);
            const std::uint32_t entry_header_size = load<std::uint32_t>(fields + 4);
            const std::uint64_t payload_size = load<std::uint64_t>(fields + 8);
            const std::uint32_t arch = load<std::uint32_t>(fields + 28);
            const std::uint64_t flags = load<std::uint64_t>(fields + 40);
            if (entry_header_size < entry_header_read || !within(entry, entry_header_size, end) ||
                !within(entry + entry_header_size, payload_size, end))
                return malformed(source, entry, "an entry is larger than its container");
            ++summary.entries;
            if ((kind == kind_elf || kind == kind_ptx) && arch <= 10000) {
                const Target target{kind == kind_elf ? CodeKind::sass : CodeKind::ptx, static_cast<int>(arch),
                                    variant_of(flags)};
                ++summary.entries_with[target];
                targets.insert(target);
            } else {
                ++summary.other_entries;
            }
            entry += entry_header_size + payload_size;
        }
        ++summary.containers;
        for (const Target& t : targets) ++summary.containers_with[t];
        ++sets[std::vector<Target>(targets.begin(), targets.end())];

        // Normally the next container starts right here; padding is skipped.
        auto next = next_container(source, offset, size, end);
        if (!next) return next.error();
        summary.skipped_bytes += *next - end;
        position = *next;
    }
    for (auto& [targets, count] : sets) summary.target_sets.push_back({targets, count});
    return summary;
}

ReadResult<FatbinSummary> read_fatbin(const ElfFile& file) {
    const ElfSection* section = file.section(".nv_fatbin");
    if (!section) return FatbinSummary{};
    return read_fatbin(file.source(), section->offset, section->size);
}

void merge_into(FatbinSummary& total, const FatbinSummary& more) {
    total.containers += more.containers;
    total.entries += more.entries;
    total.other_entries += more.other_entries;
    total.skipped_bytes += more.skipped_bytes;
    for (const auto& [t, n] : more.containers_with) total.containers_with[t] += n;
    for (const auto& [t, n] : more.entries_with) total.entries_with[t] += n;
    for (const TargetSet& set : more.target_sets) {
        auto same = std::find_if(total.target_sets.begin(), total.target_sets.end(),
                                 [&](const TargetSet& s) { return s.targets == set.targets; });
        if (same != total.target_sets.end()) same->containers += set.containers;
        else total.target_sets.push_back(set);
    }
    std::sort(total.target_sets.begin(), total.target_sets.end(),
              [](const TargetSet& a, const TargetSet& b) { return a.targets < b.targets; });
}

}  // namespace provision::native
