// The health signals DCGM's health watches gate on: the driver's recovery
// action, retired pages, rows remapped for uncorrectable errors, the link
// error counters (at start and after the copies) and the Xids of the
// kernel's log.  Read through the real dlopen code against the fake NVML,
// judged as pure functions, and the kernel log read from hostile files.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "gpu/nvml_probe.h"
#include "gpu/xid_log.h"
#include "health/findings.h"
#include "pod/gpu_links_judgement.h"
#include "recipe/recipe_loader.h"
#include "test_support.h"

using namespace provision;
using test_support::TempDir;
using test_support::write_file;

namespace {

const RecipeSet& builtin() {
    static const RecipeSet recipes = load_recipes({test_support::source_path("recipes")});
    return recipes;
}

// One GPU with `nvlinks` links and [gpus.health] `health`, [faults] `faults`.
std::string write_machine(const TempDir& dir, const std::string& health, const std::string& faults = "",
                          const std::string& capability = "9.0", int nvlinks = 18) {
    // Two GPUs (NVML's links are read only where a GPU has a peer), the first with the health given.
    std::string text = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";
    for (int gpu = 0; gpu < 2; ++gpu) {
        text += fmt::format(
            "\n[[gpus]]\nname = \"NVIDIA GPU\"\ncompute_capability = \"{}\"\nmemory_mib = 81559\n"
            "uuid = \"GPU-{}932f937-d72c-4106-c12f-20bd9faed9f6\"\nnvlinks = {}\n"
            "pcie = {{ generation = 5, width = 16, max_generation = 5, max_width = 16 }}\n",
            capability, gpu + 1, nvlinks);
        if (gpu == 0 && !health.empty()) text += "\n[gpus.health]\n" + health + "\n";
    }
    text += fmt::format("\n[[links]]\ngpus = [0, 1]\ntopology = \"NV{}\"\np2p = \"ok\"\n", nvlinks);
    if (!faults.empty()) text += "\n[faults]\n" + faults + "\n";
    const std::string path = dir.file("machine.toml");
    write_file(path, text);
    return path;
}

struct Probed {
    NvmlReport report;
    std::vector<std::optional<LinkErrorCounts>> again;  // the counters read a second time
};

Probed probe(const std::string& machine) {
    setenv("PROVISION_FAKE_GPU_FIXTURE", machine.c_str(), 1);
    Probed probed{probe_nvml(FAKE_NVML_LIBRARY, {}, NvmlAfterReading::shut_down), {}};
    std::vector<Gpu> gpus;
    for (const auto& gpu : probed.report.gpus) gpus.push_back(gpu.gpu);
    probed.again = read_link_errors_again(FAKE_NVML_LIBRARY, gpus);
    release_nvml();
    unsetenv("PROVISION_FAKE_GPU_FIXTURE");
    INFO(fmt::format("{}", fmt::join(probed.report.notes, "\n")));
    REQUIRE(probed.report.gpus.size() == 2);
    return probed;
}

Gpu hopper() {
    Gpu gpu;
    gpu.index = 0;
    gpu.nvml_index = 0;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.compute_capability = {9, 0};
    gpu.pcie = PcieLink{5, 16, 5, 16};
    return gpu;
}

std::vector<std::string> signals_of(const std::vector<Finding>& findings) {
    std::vector<std::string> signals;
    for (const auto& finding : findings) signals.push_back(finding.signal);
    return signals;
}

std::vector<std::string> signals_of(const GpuHealth& health) {
    Inventory inventory;
    inventory.source = InventorySource::driver;
    inventory.gpus.push_back(hopper());
    inventory.gpus[0].health = health;
    return signals_of(evaluate_health(inventory, builtin().policy));
}

// The findings of counters read `before` and `after` copies of `seconds`.
std::vector<Finding> judged(const LinkErrorCounts& before, const LinkErrorCounts& after, double seconds = 0.1) {
    Inventory inventory;
    inventory.gpus.push_back(hopper());
    inventory.gpus[0].health.link_errors = before;
    CopyChecks checks;
    checks.link_errors_after = {after};
    checks.copies_seconds = seconds;
    return judge_link_errors(inventory, checks, builtin().policy);
}

}  // namespace

TEST_CASE("the fake driver's counters and recovery action read back as the driver keeps them", "[gpu][health][dcgm]") {
    TempDir dir;
    SECTION("a healthy Hopper: every counter 0, nothing asked") {
        const auto probed = probe(write_machine(
            dir, "recovery_action = \"none\"\nretired_pages = 0\nuncorrectable_remapped_rows = 0\n"
                 "link_errors = { nvlink_replay = 0, nvlink_recovery = 0, nvlink_crc = 0, pcie_replays = 0 }"));
        const GpuHealth& health = probed.report.gpus[0].gpu.health;
        CHECK(health.recovery_action == RecoveryAction::none);
        CHECK(health.retired_pages == std::optional<std::uint64_t>(0));
        CHECK(health.uncorrectable_remapped_rows == std::optional<unsigned>(0));
        CHECK(health.link_errors.nvlink_replay == std::optional<std::uint64_t>(0));
        CHECK(health.link_errors.nvlink_crc == std::optional<std::uint64_t>(0));
        CHECK(health.link_errors.pcie_replays == std::optional<std::uint64_t>(0));
        // Hopper has no Blackwell fields: those stay unread.
        CHECK_FALSE(health.link_errors.nvlink_symbol_errors);
        REQUIRE(probed.again.size() == 2);
        REQUIRE(probed.again[0]);
        CHECK(probed.again[0]->nvlink_replay == std::optional<std::uint64_t>(0));
    }
    SECTION("worn and asking: the counts as given, every link's counters summed") {
        const auto probed = probe(write_machine(
            dir, "recovery_action = \"drain-p2p\"\nretired_pages = 70\nuncorrectable_remapped_rows = 600\n"
                 "link_errors = { nvlink_replay = 7, nvlink_crc = 250, pcie_replays = 12 }"));
        const GpuHealth& health = probed.report.gpus[0].gpu.health;
        CHECK(health.recovery_action == RecoveryAction::drain_p2p);
        CHECK(health.retired_pages == std::optional<std::uint64_t>(70));
        CHECK(health.uncorrectable_remapped_rows == std::optional<unsigned>(600));
        CHECK(health.link_errors.nvlink_replay == std::optional<std::uint64_t>(7));
        CHECK(health.link_errors.nvlink_crc == std::optional<std::uint64_t>(250));
        CHECK(health.link_errors.pcie_replays == std::optional<std::uint64_t>(12));
        CHECK_FALSE(health.link_errors.nvlink_recovery);  // the fixture leaves it out: not supported
    }
    SECTION("an action this build does not know") {
        const auto probed = probe(write_machine(dir, "recovery_action = \"unknown\""));
        CHECK(probed.report.gpus[0].gpu.health.recovery_action == RecoveryAction::unknown);
    }
    SECTION("a driver that reads none of them: all unread, no note") {
        const auto probed = probe(write_machine(dir, ""));
        const GpuHealth& health = probed.report.gpus[0].gpu.health;
        CHECK_FALSE(health.recovery_action);
        CHECK_FALSE(health.retired_pages);
        CHECK_FALSE(health.link_errors.any());
        CHECK(probed.report.notes.empty());
        // Nothing read at start: nothing read again either.
        CHECK_FALSE(probed.again.at(0));
    }
    SECTION("Blackwell: the recovery and symbol-error fields of each link") {
        const auto probed = probe(write_machine(
            dir, "link_errors = { nvlink_recovery_events = 2, nvlink_recovery_failed = 0, nvlink_symbol_errors = 9 }",
            "", "10.0"));
        const auto& links = probed.report.gpus[0].gpu.health.link_errors;
        CHECK(links.nvlink_recovery_events == std::optional<std::uint64_t>(2));
        CHECK(links.nvlink_recovery_failed == std::optional<std::uint64_t>(0));
        CHECK(links.nvlink_symbol_errors == std::optional<std::uint64_t>(9));
    }
    SECTION("a driver without the totals (the fake gives them from Hopper on): each link's counters, summed") {
        const auto probed = probe(write_machine(dir, "link_errors = { nvlink_replay = 3, nvlink_crc = 20 }",
                                                "link_error_rise = { nvlink_replay = 2 }", "8.0", 12));
        const auto& links = probed.report.gpus[0].gpu.health.link_errors;
        CHECK(links.nvlink_replay == std::optional<std::uint64_t>(3));
        CHECK(links.nvlink_crc == std::optional<std::uint64_t>(20));
        CHECK_FALSE(links.nvlink_recovery);
        REQUIRE(probed.again.at(0));
        CHECK(probed.again[0]->nvlink_replay == std::optional<std::uint64_t>(5));
    }
    SECTION("counters that rise between the two readings") {
        const auto probed = probe(write_machine(dir, "link_errors = { nvlink_replay = 1, pcie_replays = 4 }",
                                                "link_error_rise = { nvlink_replay = 5, pcie_replays = 40 }"));
        CHECK(probed.report.gpus[0].gpu.health.link_errors.nvlink_replay == std::optional<std::uint64_t>(1));
        REQUIRE(probed.again.at(0));
        CHECK(probed.again[0]->nvlink_replay == std::optional<std::uint64_t>(6));
        CHECK(probed.again[0]->pcie_replays == std::optional<std::uint64_t>(44));
    }
}

TEST_CASE("DCGM's limits: retired pages, uncorrectable remapped rows, the recovery action", "[health][dcgm]") {
    GpuHealth health;
    health.retired_pages = 62;
    health.uncorrectable_remapped_rows = 511;
    health.recovery_action = RecoveryAction::none;
    CHECK(signals_of(health).empty());
    health.retired_pages = 63;  // DCGM_LIMIT_MAX_RETIRED_PAGES: FAIL at the limit
    health.uncorrectable_remapped_rows = 512;
    const auto fired = signals_of(health);
    CHECK(fired == std::vector<std::string>{"retired_pages_limit", "row_remap_uncorrectable"});
    CHECK(builtin().policy.level("retired_pages_limit") == HealthLevel::failed);
    CHECK(builtin().policy.level("row_remap_uncorrectable") == HealthLevel::degraded);  // DCGM: WARN

    const std::pair<RecoveryAction, const char*> actions[] = {
        {RecoveryAction::gpu_reset, "gpu_recovery_reset"},
        {RecoveryAction::node_reboot, "gpu_recovery_reboot"},
        {RecoveryAction::drain_p2p, "gpu_recovery_drain_p2p"},
        {RecoveryAction::drain_and_reset, "gpu_recovery_drain_reset"},
        {RecoveryAction::unknown, "gpu_recovery_unknown"}};
    for (const auto& [action, signal] : actions) {
        GpuHealth asking;
        asking.recovery_action = action;
        INFO(to_string(action));
        CHECK(signals_of(asking) == std::vector<std::string>{signal});
    }
    CHECK(builtin().policy.level("gpu_recovery_drain_p2p") == HealthLevel::degraded);  // DCGM: WARN
    CHECK(builtin().policy.level("gpu_recovery_reset") == HealthLevel::failed);
}

TEST_CASE("recovery actions: NVML's numbers and the report's words", "[health][dcgm]") {
    CHECK(recovery_action_of(0) == RecoveryAction::none);
    CHECK(recovery_action_of(1) == RecoveryAction::gpu_reset);
    CHECK(recovery_action_of(2) == RecoveryAction::node_reboot);
    CHECK(recovery_action_of(3) == RecoveryAction::drain_p2p);
    CHECK(recovery_action_of(4) == RecoveryAction::drain_and_reset);
    CHECK(recovery_action_of(5) == RecoveryAction::unknown);
    CHECK(recovery_action_of(-1) == RecoveryAction::unknown);
    for (const auto action : {RecoveryAction::none, RecoveryAction::gpu_reset, RecoveryAction::node_reboot,
                              RecoveryAction::drain_p2p, RecoveryAction::drain_and_reset, RecoveryAction::unknown})
        CHECK(parse_recovery_action(to_string(action)) == action);
    CHECK_FALSE(parse_recovery_action("reboot"));
}

TEST_CASE("critical Xids fail the GPU, others do not; an unread log is no finding", "[health][dcgm][xid]") {
    GpuHealth health;
    health.xids = std::vector<XidEvent>{{31, "0000:18:00", "pid=1, MMU Fault"}, {13, "0000:18:00", "Graphics Exception"}};
    CHECK(signals_of(health).empty());  // an application's faults
    health.xids->push_back({79, "0000:18:00", "GPU has fallen off the bus."});
    CHECK(signals_of(health) == std::vector<std::string>{"xid_critical"});
    health.xids.reset();  // not read
    CHECK(signals_of(health).empty());
}

TEST_CASE("link counters: a rise during the copies, judged at DCGM's limits", "[pod][dcgm]") {
    LinkErrorCounts before;
    before.nvlink_replay = 10;
    before.nvlink_crc = 1000;
    before.pcie_replays = 100;
    SECTION("nothing moved") { CHECK(judged(before, before).empty()); }
    SECTION("any NVLink replay marks the GPU's links degraded, with the count") {
        LinkErrorCounts after = before;
        after.nvlink_replay = 11;
        const auto findings = judged(before, after);
        CHECK(signals_of(findings) == std::vector<std::string>{"nvlink_errors"});
        CHECK(findings.at(0).level == HealthLevel::degraded);
        CHECK_THAT(findings.at(0).words, Catch::Contains("1 replays"));
    }
    SECTION("CRC errors: under 100 a second pass, at 100 or more do not") {
        LinkErrorCounts after = before;
        after.nvlink_crc = 1009;  // 9 in 0.1 s: 90 a second
        CHECK(judged(before, after).empty());
        after.nvlink_crc = 1010;  // 100 a second
        CHECK(signals_of(judged(before, after)) == std::vector<std::string>{"nvlink_crc_errors"});
    }
    SECTION("PCIe replays over what Gen5 x16 allows in a minute") {
        CHECK(pcie_replays_allowed_per_minute(5, 16) == 31);  // ceil(32e9 x 1e-12 x 60 x 16)
        CHECK(pcie_replays_allowed_per_minute(4, 16) == 16);
        CHECK(pcie_replays_allowed_per_minute(1, 1) == 1);
        CHECK(pcie_replays_allowed_per_minute(0, 16) == pcie_replays_allowed_per_minute(1, 16));
        CHECK(pcie_replays_allowed_per_minute(9, 16) == pcie_replays_allowed_per_minute(6, 16));
        LinkErrorCounts after = before;
        after.pcie_replays = 131;
        CHECK(judged(before, after).empty());
        after.pcie_replays = 132;
        CHECK(signals_of(judged(before, after)) == std::vector<std::string>{"pcie_replays"});
    }
    SECTION("a counter that went back (a reset, a wrap) or vanished proves nothing") {
        LinkErrorCounts after = before;
        after.nvlink_replay = 0;
        after.nvlink_crc = 0;
        after.pcie_replays.reset();
        CHECK(judged(before, after).empty());
    }
    SECTION("huge counts and a zero-length window stay finite") {
        LinkErrorCounts huge;
        huge.nvlink_crc = 0;
        LinkErrorCounts after;
        after.nvlink_crc = UINT64_MAX;
        const auto findings = judged(huge, after, 0);
        CHECK(signals_of(findings) == std::vector<std::string>{"nvlink_crc_errors"});
        CHECK_THAT(findings.at(0).words, Catch::Contains("18446744073709551615 CRC errors"));
    }
}

TEST_CASE("Xid records: the driver's lines, and lines that only look like them", "[gpu][xid]") {
    const auto event = parse_xid_record(
        "3,1234,5678901,-;NVRM: Xid (PCI:0000:3B:00): 79, pid=2345, name=python, GPU has fallen off the bus.");
    REQUIRE(event);
    CHECK(event->xid == 79);
    CHECK(event->bus_id == "0000:3b:00");
    CHECK(event->message == "pid=2345, name=python, GPU has fallen off the bus.");
    CHECK(parse_xid_record("NVRM: Xid (0000:18:00): 48, An uncorrectable double bit error")->xid == 48);
    CHECK_FALSE(parse_xid_record("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.159.04"));
    CHECK_FALSE(parse_xid_record("NVRM: Xid (PCI:0000:3b:00): , no number"));
    CHECK_FALSE(parse_xid_record("NVRM: Xid (PCI:0000:3b:00): 123456, too many digits"));
    CHECK_FALSE(parse_xid_record("NVRM: Xid (PCI:0000:3b:00): 79x, glued"));
    CHECK_FALSE(parse_xid_record("NVRM: Xid (PCI:0000:3b:00 and much more than a bus id): 79, ..."));
    CHECK_FALSE(parse_xid_record("NVRM: Xid (PCI:zz:zz): 79, not hex"));
    CHECK_FALSE(parse_xid_record("NVRM: Xid (PCI:0000:3b:00"));  // cut short
    // The mark must begin a message of the kernel's own: not quoted in the middle
    // of another record, not after NUL bytes, not written by a process.
    CHECK(parse_xid_record("4,88,99,c;NVRM: Xid (PCI:0000:18:00): 79, x")->xid == 79);
    CHECK(parse_xid_record("4,88,99,-,caller=T12;NVRM: Xid (PCI:0000:18:00): 79, x")->xid == 79);
    CHECK_FALSE(parse_xid_record("4,5,6,-;process 'sh' launched '/tmp/NVRM: Xid (PCI:0000:18:00): 79, x' with "
                                 "NULL argv: empty string added"));
    CHECK_FALSE(parse_xid_record("6,7,8,-;usb 1-1: Product: NVRM: Xid (PCI:0000:18:00): 79, x"));
    CHECK_FALSE(parse_xid_record(std::string(2, '\0') + "NVRM: Xid (PCI:0000:18:00): 79, x"));
    CHECK_FALSE(parse_xid_record("12,9,9,-;NVRM: Xid (PCI:0000:18:00): 79, written to /dev/kmsg by a process"));
    CHECK_FALSE(parse_xid_record("x,9,9,-;NVRM: Xid (PCI:0000:18:00): 79, no prefix of /dev/kmsg's"));
    // A message of control bytes comes back printable and bounded.
    const auto hostile = parse_xid_record("NVRM: Xid (PCI:0000:3b:00): 13, \x1b[2J" + std::string(5000, 'A'));
    REQUIRE(hostile);
    CHECK(hostile->message.find('\x1b') == std::string::npos);
    CHECK(hostile->message.size() < 400);
    CHECK(same_gpu_bus("0000:3b:00", "0000:3B:00.0"));
    CHECK_FALSE(same_gpu_bus("0000:3b:00", "0000:3b:001.0"));
    CHECK_FALSE(same_gpu_bus("", "0000:3b:00.0"));
}

TEST_CASE("the kernel log: read when it can be, bounded whatever it holds, else not read", "[gpu][xid]") {
    TempDir dir;
    SECTION("a log of records, one a line") {
        write_file(dir.file("kmsg"), "6,1,1,-;usb 1-1: new device\n"
                                     "4,2,2,-;NVRM: Xid (PCI:0000:18:00): 31, pid=9, MMU Fault\n"
                                     "4,3,3,-;NVRM: Xid (PCI:0000:20:00): 79, GPU has fallen off the bus.\n");
        const XidLog log = read_xid_log(dir.file("kmsg"));
        CHECK(log.read);
        REQUIRE(log.events.size() == 2);
        CHECK(log.events[1].xid == 79);
        CHECK(xid_log_cut_note(log).empty());
    }
    SECTION("absent, a folder, a FIFO: not read, and why") {
        CHECK_FALSE(read_xid_log(dir.file("absent")).read);
        CHECK_THAT(read_xid_log(dir.file("absent")).why_not, Catch::Contains("cannot be read"));
        CHECK_FALSE(read_xid_log(dir.path()).read);
        REQUIRE(mkfifo(dir.file("fifo").c_str(), 0600) == 0);
        const XidLog fifo = read_xid_log(dir.file("fifo"));  // no writer: opened without waiting
        CHECK_FALSE(fifo.read);
        CHECK_THAT(fifo.why_not, Catch::Contains("is not the kernel's log"));
    }
    SECTION("one 1 MiB line, binary bytes, a last line without its newline") {
        std::string text(1 << 20, 'x');
        text += "NVRM: Xid (PCI:0000:18:00): 48, hidden past the cut\n";
        const char binary[] = "\0\xff\x01NVRM: Xid (PCI:0000:18:00): 62, after binary\n";
        text.append(binary, sizeof binary - 1);
        text += "NVRM: Xid (PCI:0000:18:00): 92, no newline";
        write_file(dir.file("kmsg"), text);
        const XidLog log = read_xid_log(dir.file("kmsg"));
        CHECK(log.read);
        REQUIRE(log.events.size() == 1);  // the overlong record is cut before its Xid; bytes before the mark: no Xid
        CHECK(log.events[0].xid == 92);
        CHECK(log.records_cut == 1);
    }
    SECTION("more Xid lines than kept: the first of each kind and the newest, the rest counted") {
        std::string text = "NVRM: Xid (PCI:0000:20:00): 13, the first\n";
        for (std::size_t i = 0; i < kMostXidEvents + 5; ++i) text += "NVRM: Xid (PCI:0000:20:00): 13, again\n";
        text += "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n";
        for (std::size_t i = 0; i < kMostXidEvents + 5; ++i) text += "NVRM: Xid (PCI:0000:20:00): 45, killed\n";
        write_file(dir.file("kmsg"), text);
        const XidLog log = read_xid_log(dir.file("kmsg"));
        CHECK(log.events.size() == 3 + kMostXidEvents);
        CHECK(log.events[0].message == "the first");
        CHECK(log.events[1].xid == 79);
        CHECK(log.events.back().xid == 45);
        CHECK(log.events_left_out == 2 * (kMostXidEvents + 5) + 2 - log.events.size());
        CHECK_THAT(xid_log_cut_note(log), Catch::Contains("Xid events were left out"));
    }
    SECTION("a stand-in longer than the kernel's largest log: its newest bytes are read") {
        std::string text;
        while (text.size() < kMostLogBytes + 100) text += "6,1,1,-;usb 1-1: an unrelated record\n";
        text += "3,2,2,-;NVRM: Xid (PCI:0000:18:00): 79, the newest\n";
        write_file(dir.file("kmsg"), text);
        const XidLog log = read_xid_log(dir.file("kmsg"));
        CHECK(log.read);
        REQUIRE(log.events.size() == 1);
        CHECK(log.events[0].xid == 79);
        CHECK(log.bytes_not_read >= text.size() - kMostLogBytes);
        CHECK_THAT(xid_log_cut_note(log), Catch::Contains("oldest"));
    }
    SECTION("/dev/null: a device with nothing in it") {
        const XidLog log = read_xid_log("/dev/null");
        CHECK(log.read);
        CHECK(log.events.empty());
    }
}
