// The fabric handle proven across nodes (docs/DESIGN.md "Multi-node NVLink",
// "Across nodes"): the lines of the rendezvous that carry it, which node
// exports for which, and who is to blame when the import does not pass.
// Pure functions: no socket, no clock, no driver.
//
// NCCL's own check (ncclMnnvlCheck) exports and imports a fabric handle in
// one process; IMEX brokers an import from another node only.  So where
// nodes share a clique (the fabric stage's cluster UUID and clique id), one
// of them exports a CU_MEM_HANDLE_TYPE_FABRIC allocation that its worker
// filled with a known pattern, and another imports, maps and reads it:
//   node -> 0   "fabric-clique CLUSTER CLIQUE"        (it is in an MNNVL clique)
//   0 -> node   "fabric-export IMPORTER"               (the clique's exporter)
//   node -> 0   "fabric-handle HANDLE" | "fabric-handle - WHY"
//   0 -> node   "fabric-import EXPORTER HANDLE"        (a node of the same clique)
//   node -> 0   "fabric-imported STATE CUDA_ERROR WHY"
// CLUSTER is the 32 hex digits of the cluster UUID, CLIQUE the clique id in
// decimal, HANDLE the 64 bytes of CUmemFabricHandle as 128 hex digits: every
// line stays far below wire.h's kMostLineBytes.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

constexpr std::size_t kFabricHandleDigits = 128;  // CUmemFabricHandle: 64 bytes

// An MNNVL clique as the fabric stage judged it (a cluster UUID of zero is none).
struct FabricCliqueKey {
    std::string cluster_uuid;  // 32 lowercase hex digits, not all zero
    unsigned clique_id = 0;
    auto operator<=>(const FabricCliqueKey&) const = default;
};

// The outcome of one import on the importing node.
enum class FabricImport : int {
    passed,        // imported, mapped, and the exporter's pattern read back
    failed,        // a CUDA call failed here, or the bytes were wrong
    not_measured,  // no handle came (the exporter could not export, vanished, or the limit passed)
};
std::string_view to_string(FabricImport outcome);
std::optional<FabricImport> parse_fabric_import(std::string_view text);

std::string format_clique_line(const FabricCliqueKey& clique);
std::optional<FabricCliqueKey> parse_clique_line(std::string_view line);

std::string format_export_line(int importer);
std::optional<int> parse_export_line(std::string_view line, int nodes);

// "fabric-handle HANDLE", or with no handle "fabric-handle - WHY".
struct HandleLine {
    std::string handle;  // 128 hex digits; empty: none, `why` says why
    std::string why;
};
std::string format_handle_line(const HandleLine& line);
std::optional<HandleLine> parse_handle_line(std::string_view line);

struct ImportLine {
    int exporter = 0;
    std::string handle;
};
std::string format_import_line(const ImportLine& line);
std::optional<ImportLine> parse_import_line(std::string_view line, int nodes);

struct ImportedLine {
    FabricImport outcome = FabricImport::not_measured;
    int cuda_error = 0;  // CUDA's error where a call failed (400: invalid resource handle)
    std::string why;
};
std::string format_imported_line(const ImportedLine& line);
std::optional<ImportedLine> parse_imported_line(std::string_view line);

// Who exports for whom: in each clique of two or more nodes, the lowest node
// rank exports and the next imports (one pair a clique: IMEX brokers every
// node of a clique alike, and the all-reduce then crosses them all).
struct FabricPair {
    FabricCliqueKey clique;
    int exporter = 0;
    int importer = 0;
};
std::vector<FabricPair> plan_fabric_pairs(const std::map<int, FabricCliqueKey>& clique_of_node);

// The importing node's part, judged.  The rule of job_proof.h holds: only
// an import that failed here, with CUDA's error, is this node's finding
// (mnnvl_handle_failed); a handle that never came because the exporter
// could not make it or vanished names the exporter, never this node.
enum class FabricBlame {
    proven,         // the pattern read back across nodes
    own_failure,    // this node's import failed: its finding, with CUDA's error
    exporter_lost,  // the exporter vanished, failed to export, or sent nothing by the limit
};
struct FabricVerdict {
    FabricBlame blame = FabricBlame::exporter_lost;
    int exporter = 0;
    std::string detail;
};
FabricVerdict judge_fabric_import(int exporter, const std::optional<ImportedLine>& own, bool exporter_gone,
                                  std::string_view exporter_why);

}  // namespace provision::network
