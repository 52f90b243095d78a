#include "network/nccl_name_list.h"

#include <cctype>

namespace provision::network {
namespace {

constexpr std::size_t kPrefixBytes = 63;  // netIf.prefix[64], through snprintf

// atoi: leading blanks, a sign, digits; anything else ends it (and no
// digits at all is 0).  Clamped where atoi would overflow.
int atoi_like(std::string_view text) {
    std::size_t at = 0;
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    bool negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) negative = text[at++] == '-';
    long long value = 0;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at)
        if (value < 1'000'000'000) value = value * 10 + (text[at] - '0');
    return static_cast<int>(negative ? -value : value);
}

}  // namespace

bool NcclNameList::takes(std::string_view name, int port) const {
    bool listed = entries.empty();  // matchIfList: no list matches all
    for (const NcclNameEntry& entry : entries) {
        // matchIf: exact compares the whole name; else the entry is a prefix.
        const bool name_matches = exact ? name == entry.prefix : name.substr(0, entry.prefix.size()) == entry.prefix;
        // matchPort: -1 on either side matches any.
        const bool port_matches = port == -1 || entry.port == -1 || port == entry.port;
        if (name_matches && port_matches) {
            listed = true;
            break;
        }
    }
    return listed != exclude;
}

NcclNameList parse_nccl_name_list(std::string_view text, int max_entries) {
    NcclNameList list;
    list.text = std::string(text);
    if (!text.empty() && text.front() == '^') {
        list.exclude = true;
        text.remove_prefix(1);
    }
    if (!text.empty() && text.front() == '=') {
        list.exact = true;
        text.remove_prefix(1);
    }
    // strtok_r on ",": empty entries between commas are skipped.
    std::size_t start = 0;
    while (start <= text.size() && static_cast<int>(list.entries.size()) < max_entries) {
        const std::size_t comma = text.find(',', start);
        const std::string_view entry = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
        if (!entry.empty()) {
            // strsep on ":": the name, then the port (rail and plane are not ours).
            const std::size_t colon = entry.find(':');
            const std::string_view name = entry.substr(0, colon);
            if (!name.empty()) {
                NcclNameEntry parsed;
                parsed.prefix = std::string(name.substr(0, kPrefixBytes));
                if (colon != std::string_view::npos) {
                    const std::string_view rest = entry.substr(colon + 1);
                    const std::string_view port = rest.substr(0, rest.find(':'));
                    if (!port.empty()) parsed.port = atoi_like(port);
                }
                list.entries.push_back(std::move(parsed));
            }
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return list;
}

}  // namespace provision::network
