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
// Bounds no real fatbinary comes near (torch 2.11's libtorch_cuda.so: 444
// containers, 3,233 entries, a handful of target sets; cuBLASLt: 2,775
// containers): past them the section is refused as malformed.
constexpr std::size_t max_containers = 1 << 20;
constexpr std::size_t max_entries = 1 << 22;
constexpr std::size_t max_target_sets = 4096;
constexpr std::size_t max_set_targets = 1 << 16;
// What one read from the file fetches at least: a header read that falls in
// the bytes last fetched costs no system call.
constexpr std::size_t window_bytes = 512;

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

// The section's bytes, read forward through a small window: headers close
// together (small containers, padding scanned 8 bytes at a time) are read
// from the file once, and a jump over a payload reads only the header
// there.  Each byte of the section is fetched about once, whatever the
// layout.
class SectionReader {
public:
    SectionReader(const ByteSource& source, std::uint64_t offset, std::uint64_t size)
        : source_(source), offset_(offset), size_(size) {}

    // `length` (at most window_bytes) bytes at section position `at`.
    bool read(std::uint64_t at, void* out, std::size_t length) {
        if (!within(at, length, size_)) return false;
        if (at < window_start_ || at + length > window_start_ + window_size_) {
            window_start_ = at;
            window_size_ = static_cast<std::size_t>(std::min<std::uint64_t>(window_bytes, size_ - at));
            if (!source_.read_at(offset_ + at, window_, window_size_)) {
                window_size_ = 0;
                return false;
            }
        }
        std::memcpy(out, window_ + (at - window_start_), length);
        return true;
    }

    // The position of the next container magic at 8-byte alignment at or
    // after `from`, or the section's size when there is none.
    ReadResult<std::uint64_t> next_container(std::uint64_t from) {
        for (from = (from + 7) & ~std::uint64_t{7}; from + 4 <= size_; from += 8) {
            unsigned char magic[4];
            if (!read(from, magic, sizeof magic)) return malformed(source_, from, "cannot be read");
            if (load<std::uint32_t>(magic) == container_magic) return from;
        }
        return size_;
    }

    std::uint64_t size() const { return size_; }

private:
    const ByteSource& source_;
    std::uint64_t offset_, size_;
    unsigned char window_[window_bytes];
    std::uint64_t window_start_ = 0;
    std::size_t window_size_ = 0;
};

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
    SectionReader section(source, offset, size);
    FatbinSummary summary;
    std::map<std::vector<Target>, std::size_t> sets;
    std::size_t set_targets = 0;  // targets in all distinct sets together
    auto found = section.next_container(0);
    if (!found) return found.error();
    summary.skipped_bytes += *found;
    std::uint64_t position = *found;
    while (position < size) {
        if (summary.containers == max_containers)
            return malformed(source, position, fmt::format("more than {} containers", max_containers));
        unsigned char header[container_header_size];
        if (!section.read(position, header, sizeof header))
            return malformed(source, position, "a container header is cut off");
        const std::uint16_t header_size = load<std::uint16_t>(header + 6);
        const std::uint64_t fat_size = load<std::uint64_t>(header + 8);
        if (header_size < container_header_size || !within(position + header_size, 0, size) ||
            !within(position + header_size, fat_size, size))
            return malformed(source, position, "a container is larger than its section");
        const std::uint64_t end = position + header_size + fat_size;

        std::set<Target> targets;
        std::uint64_t entry = position + header_size;
        while (entry + entry_header_read <= end) {
            if (summary.entries == max_entries)
                return malformed(source, entry, fmt::format("more than {} entries", max_entries));
            unsigned char fields[entry_header_read];
            if (!section.read(entry, fields, sizeof fields)) return malformed(source, entry, "cannot be read");
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
        std::size_t& same_set = sets[std::vector<Target>(targets.begin(), targets.end())];
        if (++same_set == 1) set_targets += targets.size();
        if (sets.size() > max_target_sets || set_targets > max_set_targets)
            return malformed(source, position, "too many different sets of targets");

        // Normally the next container starts right here; padding is skipped.
        auto next = section.next_container(end);
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
