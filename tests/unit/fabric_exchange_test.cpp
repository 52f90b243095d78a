// The fabric handle across nodes (src/network/fabric_exchange.h): its lines
// of the rendezvous, who exports for whom, and the blame when the import
// does not pass.
#include <string>

#include <catch2/catch.hpp>

#include "network/fabric_exchange.h"
#include "network/wire.h"

using namespace provision::network;

namespace {

const std::string kCluster = "814d0f3a00000000000000000000b5b7";
std::string handle_digits() {
    std::string handle;
    for (int i = 0; i < 64; ++i) handle += "a5";
    return handle;
}

}  // namespace

TEST_CASE("fabric exchange: every line reads back as written, and stays within a rendezvous line", "[fabric][rendezvous]") {
    const std::string clique = format_clique_line({kCluster, 32766});
    CHECK(clique == "fabric-clique " + kCluster + " 32766\n");
    const auto key = parse_clique_line(clique.substr(0, clique.size() - 1));
    REQUIRE(key);
    CHECK(key->cluster_uuid == kCluster);
    CHECK(key->clique_id == 32766);

    CHECK(parse_export_line("fabric-export 3", 4) == 3);

    const std::string handle = format_handle_line({handle_digits(), ""});
    CHECK(handle.size() < kMostLineBytes);
    const auto read = parse_handle_line(handle.substr(0, handle.size() - 1));
    REQUIRE(read);
    CHECK(read->handle == handle_digits());

    const auto none = parse_handle_line("fabric-handle - cuMemCreate: CUDA error 800 (CUDA_ERROR_NOT_PERMITTED)");
    REQUIRE(none);
    CHECK(none->handle.empty());
    CHECK(none->why == "cuMemCreate: CUDA error 800 (CUDA_ERROR_NOT_PERMITTED)");

    const std::string import = format_import_line({2, handle_digits()});
    CHECK(import.size() < kMostLineBytes);
    const auto imported = parse_import_line(import.substr(0, import.size() - 1), 4);
    REQUIRE(imported);
    CHECK(imported->exporter == 2);

    const std::string outcome = format_imported_line(
        {FabricImport::failed, 400, "cuMemImportFromShareableHandle: CUDA error 400 (CUDA_ERROR_INVALID_HANDLE)"});
    const auto back = parse_imported_line(outcome.substr(0, outcome.size() - 1));
    REQUIRE(back);
    CHECK(back->outcome == FabricImport::failed);
    CHECK(back->cuda_error == 400);
    CHECK(back->why == "cuMemImportFromShareableHandle: CUDA error 400 (CUDA_ERROR_INVALID_HANDLE)");
}

TEST_CASE("fabric exchange: what a peer may not send is no line of it", "[fabric][rendezvous]") {
    CHECK_FALSE(parse_clique_line("fabric-clique 00000000000000000000000000000000 1"));  // zero: no MNNVL
    CHECK_FALSE(parse_clique_line("fabric-clique " + kCluster + " 4294967296"));
    CHECK_FALSE(parse_clique_line("fabric-clique " + kCluster.substr(2) + " 1"));
    CHECK_FALSE(parse_clique_line("fabric-clique " + kCluster + " 1 extra"));
    CHECK_FALSE(parse_export_line("fabric-export 4", 4));
    CHECK_FALSE(parse_export_line("fabric-export -1", 4));
    CHECK_FALSE(parse_handle_line("fabric-handle " + handle_digits().substr(2)));
    CHECK_FALSE(parse_handle_line("fabric-handle " + handle_digits() + "00"));
    CHECK_FALSE(parse_handle_line("fabric-handle " + std::string(128, 'G')));
    CHECK_FALSE(parse_import_line("fabric-import 9 " + handle_digits(), 4));
    CHECK_FALSE(parse_imported_line("fabric-imported maybe 0 -"));
    CHECK_FALSE(parse_imported_line("fabric-imported passed 100001 -"));
    CHECK_FALSE(parse_imported_line("report passed 0 -"));
    // A reason is cut and made printable.
    const auto long_why = parse_handle_line("fabric-handle - " + std::string(4000, 'x') + "\x1b[31m");
    REQUIRE(long_why);
    CHECK(long_why->why.size() <= 600);
    CHECK(long_why->why.find('\x1b') == std::string::npos);
}

TEST_CASE("fabric exchange: in each clique of two or more nodes the lowest exports to the next", "[fabric][rendezvous]") {
    const FabricCliqueKey a{kCluster, 1}, b{kCluster, 2}, c{"11111111111111111111111111111111", 1};
    const auto pairs = plan_fabric_pairs({{0, a}, {1, b}, {2, a}, {3, b}, {4, a}, {5, c}});
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0].clique == a);
    CHECK(pairs[0].exporter == 0);
    CHECK(pairs[0].importer == 2);
    CHECK(pairs[1].clique == b);
    CHECK(pairs[1].exporter == 1);
    CHECK(pairs[1].importer == 3);
    CHECK(plan_fabric_pairs({{0, a}, {1, c}}).empty());  // no clique spans two nodes
    CHECK(plan_fabric_pairs({}).empty());
}

TEST_CASE("fabric exchange: only an import that failed here is this node's finding", "[fabric][rendezvous]") {
    const auto proven = judge_fabric_import(0, ImportedLine{FabricImport::passed, 0, "read back"}, false, "");
    CHECK(proven.blame == FabricBlame::proven);

    const auto failed = judge_fabric_import(
        0, ImportedLine{FabricImport::failed, 400, "cuMemImportFromShareableHandle: CUDA error 400 (CUDA_ERROR_INVALID_HANDLE)"},
        false, "");
    CHECK(failed.blame == FabricBlame::own_failure);
    CHECK(failed.detail.find("CUDA error 400") != std::string::npos);

    // The exporter vanished while this node waited: never this node's fault.
    const auto gone = judge_fabric_import(3, std::nullopt, true, "");
    CHECK(gone.blame == FabricBlame::exporter_lost);
    CHECK(gone.exporter == 3);
    CHECK(gone.detail.find("node 3 vanished") != std::string::npos);
    const auto no_handle = judge_fabric_import(3, ImportedLine{FabricImport::not_measured, 0, "-"}, false,
                                               "cuMemCreate: CUDA error 800 (CUDA_ERROR_NOT_PERMITTED)");
    CHECK(no_handle.blame == FabricBlame::exporter_lost);
    CHECK(no_handle.detail.find("CUDA error 800") != std::string::npos);
    CHECK(judge_fabric_import(3, std::nullopt, false, "").detail.find("by the limit") != std::string::npos);
}
