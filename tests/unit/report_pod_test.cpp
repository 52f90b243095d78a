// The pod's part of the JSON report and the summary: nulls where toml has
// none, links with their checks, per-GPU nvlinks and pcie.
#include <catch2/catch.hpp>

#include "report/report.h"

using namespace provision;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Report two_gpu_report() {
    Report report;
    report.inventory.source = InventorySource::driver;
    for (int i = 0; i < 2; ++i) {
        Gpu gpu;
        gpu.index = i;
        gpu.name = "NaN";  // a string that spells the placeholder stays a string
        gpu.nvlinks = NvLinkCount{18, 17};
        gpu.pcie = PcieLink{5, 16, 5, 16};
        report.inventory.gpus.push_back(gpu);
    }
    LinkReport link;
    link.pair = {0, 1, LinkPath::nvlink, 17, PeerAccess::ok};
    link.state = LinkState::broken;
    link.check = PeerCopyResult{0, 1, PeerCopyStatus::wrong_bytes, 370.04, 12.25, "offset 64: 0x00 where 0x5a"};
    link.expected = ExpectedBandwidth{350.2, false, "NVLink 4, 17 links"};
    report.pod.links.push_back(link);
    report.pod.host_copies.push_back({1, 52.14, 51.79, std::nullopt});
    return report;
}

}  // namespace

TEST_CASE("the JSON report: links, per-GPU nvlinks and pcie, and the container with nulls", "[report][pod]") {
    Report report = two_gpu_report();
    std::string json = render_json(report);
    CHECK(has(json, R"("links" : [)"));
    CHECK(has(json, R"("topology" : "NV17")"));
    CHECK(has(json, R"("state" : "broken")"));
    CHECK(has(json, R"("status" : "wrong-bytes")"));
    CHECK(has(json, R"("gb_per_s" : [)"));
    CHECK(has(json, "370.0"));
    CHECK(has(json, "12.3"));  // rounded to a tenth
    CHECK(has(json, R"("nvlinks" : {)"));
    CHECK(has(json, R"("h2d_gb_per_s" : 52.1)"));
    CHECK(has(json, R"("name" : "NaN")"));
    // No /dev/shm and no RDMA devices: shm_bytes null, memlock_bytes not read.
    CHECK(has(json, R"("shm_bytes" : null)"));
    CHECK_FALSE(has(json, "memlock_bytes"));
    report.pod.container = {std::uint64_t{1} << 30, {"mlx5_0"}, true, std::nullopt};
    json = render_json(report);
    CHECK(has(json, R"("shm_bytes" : 1073741824)"));
    CHECK(has(json, R"("memlock_bytes" : null)"));
    CHECK_FALSE(has(json, " NaN"));
}

TEST_CASE("the summary: --explain's matrix and each GPU's links; nothing for one GPU", "[report][pod]") {
    Report report = two_gpu_report();
    report.pod.peer_access.why = "peer copies are broken between GPUs 0 and 1; written: NCCL_P2P_DISABLE=1";
    const std::string text = render_summary(report, true);
    CHECK(has(text, "Peer access:"));
    CHECK(has(text, "GPU 0: NVLinks 17 of 18 active; PCIe Gen5 x16 (max Gen5 x16)"));
    CHECK(has(text, "GPU 1: NVLinks 17 of 18 active; PCIe Gen5 x16 (max Gen5 x16); pinned copies 52.1 GB/s to the "
                    "GPU, 51.8 GB/s from it"));
    CHECK(has(text, "GPU0        X   NV17"));
    CHECK(has(text, "GPU1   BROKEN      X"));
    CHECK(has(text, "GPU 0 - GPU 1: wrong-bytes (offset 64: 0x00 where 0x5a)"));
    CHECK(has(text, "Container: /dev/shm missing; RDMA devices: none"));

    Report one;
    one.inventory.gpus.push_back(report.inventory.gpus[0]);
    const std::string alone = render_summary(one, true);
    CHECK_FALSE(has(alone, "Links between GPUs"));
    CHECK_FALSE(has(alone, "Peer access"));
}
