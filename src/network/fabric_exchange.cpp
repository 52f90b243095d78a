#include "network/fabric_exchange.h"

#include <fmt/format.h>

#include "core/text.h"
#include "network/wire.h"

namespace provision::network {
namespace {

constexpr std::size_t kMostWhyBytes = 512;
constexpr std::int64_t kMostCliqueId = 0xffffffffll;  // nvmlGpuFabricInfo_t cliqueId: unsigned int
constexpr std::int64_t kMostCudaError = 100000;        // CUresult codes stay below 1000 today

std::string why_of(std::string_view why) { return printable(why.empty() ? "-" : why, kMostWhyBytes); }

bool is_cluster_uuid(std::string_view text) {
    return text.size() == 32 && is_hex(text, 32) && text.find_first_not_of('0') != std::string_view::npos;
}

bool is_handle(std::string_view text) { return text.size() == kFabricHandleDigits && is_hex(text, kFabricHandleDigits); }

}  // namespace

std::string_view to_string(FabricImport outcome) {
    switch (outcome) {
        case FabricImport::passed: return "passed";
        case FabricImport::failed: return "failed";
        case FabricImport::not_measured: break;
    }
    return "not-measured";
}

std::optional<FabricImport> parse_fabric_import(std::string_view text) {
    for (const auto outcome : {FabricImport::passed, FabricImport::failed, FabricImport::not_measured})
        if (text == to_string(outcome)) return outcome;
    return std::nullopt;
}

std::string format_clique_line(const FabricCliqueKey& clique) {
    return fmt::format("fabric-clique {} {}\n", clique.cluster_uuid, clique.clique_id);
}

std::optional<FabricCliqueKey> parse_clique_line(std::string_view line) {
    const auto words = words_of(line);
    if (words.size() != 3 || words[0] != "fabric-clique" || !is_cluster_uuid(words[1])) return std::nullopt;
    const auto id = bounded_number(words[2], 0, kMostCliqueId);
    if (!id) return std::nullopt;
    return FabricCliqueKey{std::string(words[1]), static_cast<unsigned>(*id)};
}

std::string format_export_line(int importer) { return fmt::format("fabric-export {}\n", importer); }

std::optional<int> parse_export_line(std::string_view line, int nodes) {
    const auto words = words_of(line);
    if (words.size() != 2 || words[0] != "fabric-export") return std::nullopt;
    const auto importer = bounded_number(words[1], 0, nodes - 1);
    if (!importer) return std::nullopt;
    return static_cast<int>(*importer);
}

std::string format_handle_line(const HandleLine& line) {
    if (is_handle(line.handle)) return fmt::format("fabric-handle {}\n", line.handle);
    return fmt::format("fabric-handle - {}\n", why_of(line.why));
}

std::optional<HandleLine> parse_handle_line(std::string_view line) {
    const auto words = words_of(line);
    if (words.size() < 2 || words[0] != "fabric-handle") return std::nullopt;
    if (words[1] == "-") return HandleLine{"", printable(rest_after(line, 2), kMostWhyBytes)};
    if (words.size() != 2 || !is_handle(words[1])) return std::nullopt;
    return HandleLine{std::string(words[1]), ""};
}

std::string format_import_line(const ImportLine& line) {
    return fmt::format("fabric-import {} {}\n", line.exporter, line.handle);
}

std::optional<ImportLine> parse_import_line(std::string_view line, int nodes) {
    const auto words = words_of(line);
    if (words.size() != 3 || words[0] != "fabric-import" || !is_handle(words[2])) return std::nullopt;
    const auto exporter = bounded_number(words[1], 0, nodes - 1);
    if (!exporter) return std::nullopt;
    return ImportLine{static_cast<int>(*exporter), std::string(words[2])};
}

std::string format_imported_line(const ImportedLine& line) {
    return fmt::format("fabric-imported {} {} {}\n", to_string(line.outcome), line.cuda_error, why_of(line.why));
}

std::optional<ImportedLine> parse_imported_line(std::string_view line) {
    const auto words = words_of(line);
    if (words.size() < 4 || words[0] != "fabric-imported") return std::nullopt;
    const auto outcome = parse_fabric_import(words[1]);
    const auto error = bounded_number(words[2], 0, kMostCudaError);
    if (!outcome || !error) return std::nullopt;
    return ImportedLine{*outcome, static_cast<int>(*error), printable(rest_after(line, 3), kMostWhyBytes)};
}

std::vector<FabricPair> plan_fabric_pairs(const std::map<int, FabricCliqueKey>& clique_of_node) {
    std::map<FabricCliqueKey, std::vector<int>> nodes_of;  // node ranks ascend: the map's order
    for (const auto& [node, clique] : clique_of_node) nodes_of[clique].push_back(node);
    std::vector<FabricPair> pairs;
    for (const auto& [clique, nodes] : nodes_of)
        if (nodes.size() >= 2) pairs.push_back({clique, nodes[0], nodes[1]});
    return pairs;
}

FabricVerdict judge_fabric_import(int exporter, const std::optional<ImportedLine>& own, bool exporter_gone,
                                  std::string_view exporter_why) {
    FabricVerdict verdict;
    verdict.exporter = exporter;
    if (own && own->outcome == FabricImport::passed) {
        verdict.blame = FabricBlame::proven;
        verdict.detail = fmt::format("node {}'s fabric handle imported, mapped and read back here", exporter);
    } else if (own && own->outcome == FabricImport::failed) {
        verdict.blame = FabricBlame::own_failure;
        verdict.detail = fmt::format("importing node {}'s fabric handle failed here: {}", exporter, own->why);
    } else {
        verdict.blame = FabricBlame::exporter_lost;
        verdict.detail = exporter_gone ? fmt::format("node {} vanished before its fabric handle came", exporter)
                         : exporter_why.empty()
                             ? fmt::format("no fabric handle came from node {} by the limit", exporter)
                             : fmt::format("node {} made no fabric handle: {}", exporter, exporter_why);
    }
    return verdict;
}

}  // namespace provision::network
