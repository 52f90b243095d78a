#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "validate/worker_outcome.h"
#include "worker/worker_main.h"
#include "worker_protocol/worker_protocol.h"
#include "kernels/validation_kernels.h"

using namespace provision;

TEST_CASE("a result line round-trips, awkward detail text included", "[validation][protocol]") {
    CheckOutcome result{3, "attention.bf16", CheckStatus::failed, 0.25, 0.0081, 1.5, 0, "line one\nline \"two\" 'three' = { x }"};
    const std::string line = format_result_line(result);
    CHECK(line.find('\n') == std::string::npos);
    const auto parsed = parse_result_line(line);
    REQUIRE(parsed);
    CHECK(parsed->name == "attention.bf16");
    CHECK(parsed->status == CheckStatus::failed);
    CHECK(parsed->max_rel_error == 0.25);
    CHECK(parsed->tolerance == 0.0081);
    CHECK(parsed->ms == 1.5);
    CHECK(parsed->detail == result.detail);
}

TEST_CASE("a NaN error survives the trip", "[validation][protocol]") {
    CheckOutcome result{0, "gemm.tf32", CheckStatus::failed, NAN, 1e-3, 0, 0, ""};
    const auto parsed = parse_result_line(format_result_line(result));
    REQUIRE(parsed);
    CHECK(std::isnan(parsed->max_rel_error));
}

TEST_CASE("lines that are not results are set aside", "[validation][protocol]") {
    CHECK_FALSE(parse_result_line("garbage"));
    CHECK_FALSE(parse_result_line("result = 3"));
    CHECK_FALSE(parse_result_line("result = { status = \"passed\" }"));  // no name
    CHECK_FALSE(parse_result_line("result = { name = \"gemm.tf32\", sta"));  // cut off by a kill
    const std::string good = format_result_line({0, "gemm.tf32", CheckStatus::passed, 1e-4, 1e-3, 2, 0, ""});
    const WorkerOutput output = parse_worker_output("CUDA says hello\n\n" + good + "\nresult = {");
    CHECK(output.results.size() == 1);
    CHECK(output.results.count("gemm.tf32") == 1);
    CHECK(output.unparsed == "CUDA says hello");
}

TEST_CASE("fault specs pick the fault of the first matching entry", "[validation][protocol]") {
    CHECK(fault_for_check("", "attention.bf16").empty());
    CHECK(fault_for_check("attention.bf16=wrong-result", "attention.bf16") == "wrong-result");
    CHECK(fault_for_check("attention.bf16=wrong-result", "attention.fp16").empty());
    CHECK(fault_for_check("*=hang", "gemm.tf32") == "hang");
    CHECK(fault_for_check("gemm.tf32=wrong-result,*=hang", "gemm.tf32") == "wrong-result");
    CHECK(fault_for_check("gemm.tf32=wrong-result,*=hang", "attention.fp16") == "hang");
    CHECK(fault_for_check("nonsense", "gemm.tf32").empty());
}

TEST_CASE("the worker command line names the GPU, mode and fault; the checks go to its input",
          "[validation][protocol]") {
    WorkerCommand options;
    options.mode = ValidateMode::full;
    options.fault = "*=hang";
    CHECK(worker_arguments({{2, 2}}, options) ==
          std::vector<std::string>{"__check-worker", "--mode", "full", "--gpu", "2", "--fault", "*=hang"});
    // A worker that sees its GPU alone opens CUDA device 0, which the workload sees as GPU 5.
    CHECK(worker_arguments({{0, 5}}, options) == std::vector<std::string>{"__check-worker", "--mode", "full", "--gpu",
                                                                        "0", "--as", "5", "--fault", "*=hang"});
    // A worker of two GPUs names each.
    CHECK(worker_arguments({{0, 4}, {1, 5}}, options) ==
          std::vector<std::string>{"__check-worker", "--mode", "full", "--gpu", "0", "--as", "4", "--gpu", "1", "--as",
                                   "5", "--fault", "*=hang"});
    options.simulate = true;
    options.cuda_library = "/fake/libcuda.so.1";
    const auto simulated = worker_arguments({{0, 0}}, options);
    CHECK(std::vector<std::string>(simulated.end() - 3, simulated.end()) ==
          std::vector<std::string>{"--simulate", "--cuda-library", "/fake/libcuda.so.1"});
    CHECK(format_check_list({"attention.fp16", "gemm.tf32"}) == "attention.fp16\ngemm.tf32\n\n");
}

TEST_CASE("ready and done lines round-trip, the time on the monotonic clock", "[validation][protocol]") {
    WorkerReady ready;
    ready.at = MonotonicTime(std::chrono::nanoseconds(123456789012));
    ready.open_ms = 231.5;
    ready.uuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
    ready.capability = "9.0";
    const std::string done = format_done_line(MonotonicTime(std::chrono::nanoseconds(223456789012)));
    const WorkerOutput output = parse_worker_output(format_ready_line(ready) + "\n" + done + "\n");
    CHECK(output.unparsed.empty());
    REQUIRE(output.ready);
    CHECK(output.ready->at == ready.at);
    CHECK(output.ready->open_ms == 231.5);
    CHECK(output.ready->uuid == ready.uuid);
    CHECK(output.ready->capability == "9.0");
    CHECK(output.ready->error.empty());
    REQUIRE(output.done);
    CHECK(output.done->time_since_epoch() == std::chrono::nanoseconds(223456789012));

    // A line still being written is not read yet.
    const WorkerOutput partial = parse_worker_output(format_ready_line(ready));
    CHECK_FALSE(partial.ready);
}

TEST_CASE("the worker prints ready, one parsable result per check, then done", "[validation][protocol]") {
    std::istringstream in("attention.fp16\nno.such.check\n\n");
    std::ostringstream out, err;
    const int status = run_check_worker({"--gpu", "0", "--mode", "quick"}, in, out, err);
    CHECK(status == 0);
    const WorkerOutput output = parse_worker_output(out.str());
    CHECK(output.unparsed.empty());
    REQUIRE(output.ready);
    CHECK(output.done);
    REQUIRE(output.results.size() == 2);
    CHECK(output.results.at("no.such.check").status == CheckStatus::error);
    if (output.ready->error.empty()) {  // a GPU is here
        CHECK(output.results.at("no.such.check").detail.find("unknown check") != std::string::npos);
    } else {  // without a GPU or the kernels, every check says why it could not run
        for (const auto& [name, result] : output.results) {
            CHECK(result.status == CheckStatus::error);
            CHECK(result.detail.find("the GPU could not be opened") != std::string::npos);
        }
        if (!provision::kernels::kernels_available())
            CHECK(output.ready->error.find("without a CUDA toolkit") != std::string::npos);
    }
}

TEST_CASE("a worker given no check opens nothing more and leaves", "[validation][protocol]") {
    std::istringstream in("");
    std::ostringstream out, err;
    CHECK(run_check_worker({"--gpu", "0"}, in, out, err) == 0);
    const WorkerOutput output = parse_worker_output(out.str());
    CHECK(output.results.empty());
    CHECK_FALSE(output.done);
}

TEST_CASE("a worker of several GPUs tags each line with its GPU, both ways", "[validation][protocol]") {
    CHECK(tag_lines(3, "a\n\nb\n") == "3:a\n3:\n3:b\n");
    CHECK(format_end_of_input(3) == "3!\n");
    CHECK(lines_tagged(3, "3:a\n13:x\n3:\n1:y\n3:b\n3:cut") == "a\n\nb\n");  // a cut-off last line waits
    const auto line = parse_tagged_input("12:gemm.tf32");
    REQUIRE(line);
    CHECK(line->gpu == 12);
    CHECK_FALSE(line->end);
    CHECK(line->text == "gemm.tf32");
    const auto end = parse_tagged_input("12!");
    REQUIRE(end);
    CHECK(end->end);
    for (const char* bad : {"", ":x", "!", "x:1", "1!x", "-1:x", "1234567890:x", "gemm.tf32"})
        CHECK_FALSE(parse_tagged_input(bad));
}

TEST_CASE("a worker of two GPUs answers each GPU on its own tagged lines", "[validation][protocol]") {
    // GPU 4 gets two checks; GPU 5 is told it is not needed.
    std::istringstream in(tag_lines(4, format_check_list({"attention.fp16", "no.such.check"})) + "9:stray\n" +
                          format_end_of_input(5) + format_end_of_input(4));
    std::ostringstream out, err;
    CHECK(run_check_worker({"--gpu", "0", "--as", "4", "--gpu", "1", "--as", "5"}, in, out, err) == 0);
    const WorkerOutput four = parse_worker_output(lines_tagged(4, out.str()));
    CHECK(four.unparsed.empty());
    CHECK(four.ready);
    CHECK(four.done);
    CHECK(four.results.size() == 2);
    const WorkerOutput five = parse_worker_output(lines_tagged(5, out.str()));
    CHECK(five.ready);  // it opened its GPU before it learnt it was not needed
    CHECK(five.results.empty());
    CHECK_FALSE(five.done);
    // Every line is one of theirs.
    std::istringstream lines(out.str());
    for (std::string text; std::getline(lines, text);) CHECK((text.rfind("4:", 0) == 0 || text.rfind("5:", 0) == 0));
}

TEST_CASE("the GPUs are split into at most N worker processes of consecutive GPUs", "[validation][protocol]") {
    const auto targets = [](int count, bool named) {
        std::vector<WorkerTarget> list;
        for (int gpu = 0; gpu < count; ++gpu) list.push_back({gpu, named ? std::to_string(gpu) : std::string(), {}});
        return list;
    };
    const auto sizes = [](const std::vector<std::vector<WorkerTarget>>& layout) {
        std::vector<std::size_t> each;
        for (const auto& process : layout) each.push_back(process.size());
        return each;
    };
    CHECK(sizes(worker_processes_for(targets(8, true), 2)) == std::vector<std::size_t>{4, 4});
    CHECK(sizes(worker_processes_for(targets(3, true), 2)) == std::vector<std::size_t>{2, 1});
    CHECK(sizes(worker_processes_for(targets(2, true), 2)) == std::vector<std::size_t>{1, 1});
    CHECK(sizes(worker_processes_for(targets(1, true), 2)) == std::vector<std::size_t>{1});
    CHECK(sizes(worker_processes_for(targets(3, true), 64)) == std::vector<std::size_t>{1, 1, 1});
    CHECK(sizes(worker_processes_for(targets(5, true), 1)) == std::vector<std::size_t>{5});
    CHECK(worker_processes_for({}, 2).empty());
    const auto eight = worker_processes_for(targets(8, true), 2);
    CHECK(eight[0].front().gpu == 0);
    CHECK(eight[0].back().gpu == 3);
    CHECK(eight[1].front().gpu == 4);
    // GPUs named by CUDA_VISIBLE_DEVICES and those found by provision's own never share a process.
    auto mixed = targets(2, true);
    mixed.push_back({2, {}, {}});
    CHECK(sizes(worker_processes_for(mixed, 1)) == std::vector<std::size_t>{2, 1});
}

TEST_CASE("the worker refuses bad arguments with status 2", "[validation][protocol]") {
    std::ostringstream out, err;
    std::istringstream in("gemm.tf32\n\n");
    CHECK(run_check_worker({"--gpu", "0", "--mode", "sometimes"}, in, out, err) == 2);
    CHECK(run_check_worker({"--mode", "quick"}, in, out, err) == 2);  // no --gpu
    CHECK(run_check_worker({"--gpu", "0", "--gpu", "1", "--as", "4"}, in, out, err) == 2);  // --as for one of two
    CHECK(out.str().empty());
    CHECK(err.str().find("__check-worker") != std::string::npos);
}

TEST_CASE("outcomes: results kept, missing ones explained by how the worker ended", "[validation][protocol]") {
    const GpuChecks job{1, {"attention.fp16", "gemm.tf32"}};
    ChildOutcome child;
    child.out = format_result_line({0, "attention.fp16", CheckStatus::passed, 1e-3, 4e-3, 1, 0, ""}) + "\n";

    SECTION("killed at the limit, its GPU open") {
        child.out = R"(ready = { at_ns = 5, open_ms = 3.0 })" "\n" + child.out;
        child.timed_out = true;
        child.signal = 9;
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        REQUIRE(outcomes.size() == 2);
        CHECK(outcomes[0].status == CheckStatus::passed);
        CHECK(outcomes[0].gpu == 1);
        CHECK(outcomes[1].status == CheckStatus::timeout);
        CHECK(outcomes[1].detail.find("5 s") != std::string::npos);
    }
    SECTION("killed with another GPU of its process, whose limit passed") {
        child.timed_out = true;
        child.signal = 9;
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5}, {}, 6);
        CHECK(outcomes[0].status == CheckStatus::passed);
        CHECK(outcomes[1].status == CheckStatus::error);  // not its own timeout
        CHECK(outcomes[1].detail ==
              "no result: GPU 6, opened by the same worker process, passed its limit, and the process was killed");
    }
    SECTION("crashed") {
        child.signal = 11;
        child.err = "some noise\nSegmentation fault in libcuda\n\n";
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[1].status == CheckStatus::error);
        CHECK(outcomes[1].detail.find("signal 11") != std::string::npos);
        CHECK(outcomes[1].detail.find("Segmentation fault in libcuda") != std::string::npos);
    }
    SECTION("exited without a result") {
        child.exit_code = 1;
        child.out += "Traceback: something odd\n";
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[1].status == CheckStatus::error);
        CHECK(outcomes[1].detail.find("status 1") != std::string::npos);
        CHECK(outcomes[1].detail.find("Traceback: something odd") != std::string::npos);
    }
    SECTION("could not start") {
        child = ChildOutcome{};
        child.start_error = "cannot start /nowhere: No such file or directory";
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[0].status == CheckStatus::error);
        CHECK(outcomes[0].detail.find("/nowhere") != std::string::npos);
    }
    SECTION("an unknown status is an error") {
        child.out = R"(result = { name = "gemm.tf32", status = "great", detail = "fine" })" "\n";
        child.exit_code = 0;
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[1].status == CheckStatus::error);
        CHECK(outcomes[1].detail.find("great") != std::string::npos);
    }
    SECTION("could not open its GPU") {
        child.out = R"(ready = { at_ns = 5, open_ms = 3.0, error = "cudaErrorNoDevice" })" "\n";
        child.exit_code = 0;
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[0].status == CheckStatus::error);
        CHECK(outcomes[0].detail == "the validation worker could not open the GPU: cudaErrorNoDevice");
    }
    SECTION("killed while still opening its GPU") {
        child = ChildOutcome{};
        child.timed_out = true;
        child.signal = 9;
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[0].status == CheckStatus::timeout);
        CHECK(outcomes[0].detail.find("still opening the GPU after 20 s (PROVISION_DETECT_TIMEOUT)") !=
              std::string::npos);
    }
    SECTION("opened another GPU than the one expected") {
        child.out = R"(ready = { at_ns = 5, open_ms = 3.0, uuid = "GPU-aaaa" })" "\n" + child.out;
        const auto outcomes =
            outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5}, "GPU-bbbb");
        for (const auto& outcome : outcomes) {
            CHECK(outcome.status == CheckStatus::error);
            CHECK(outcome.detail.find("opened GPU GPU-aaaa, not GPU-bbbb") != std::string::npos);
        }
        // The same GPU, written in capitals, is the same GPU.
        CHECK(outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5}, "GPU-AAAA")[0].status ==
              CheckStatus::passed);
    }
    SECTION("timeout is the parent's word, never a worker's") {
        child.out = R"(result = { name = "gemm.tf32", status = "timeout" })" "\n";
        const auto outcomes = outcomes_from_worker(job, child, parse_worker_output(child.out), WorkerLimits{20, 5});
        CHECK(outcomes[1].status == CheckStatus::error);
        CHECK(outcomes[1].detail == "the worker reported an unknown status 'timeout'");
    }
}

TEST_CASE("link commands and their answers round-trip", "[validation][protocol][links]") {
    const auto host = parse_link_command(format_host_link_command(32 << 20, 3));
    REQUIRE(host);
    CHECK(host->kind == LinkCommand::Kind::host_link);
    CHECK(host->bytes == std::size_t{32} << 20);
    CHECK(host->repeats == 3);
    const auto exported = parse_link_command(format_export_command(5, 1 << 26, PeerPath::cumem_fd));
    REQUIRE(exported);
    CHECK(exported->kind == LinkCommand::Kind::export_buffer);
    CHECK(exported->gpu == 5);
    CHECK(exported->path == PeerPath::cumem_fd);
    const auto pull = parse_link_command(format_pull_command(2, 1 << 26, 3, PeerPath::legacy_ipc, "0a1b2c"));
    REQUIRE(pull);
    CHECK(pull->kind == LinkCommand::Kind::pull);
    CHECK(pull->gpu == 2);
    CHECK(pull->path == PeerPath::legacy_ipc);
    CHECK(pull->handle == "0a1b2c");
    const auto memory = parse_link_command(format_host_memory_command());
    REQUIRE(memory);
    CHECK(memory->kind == LinkCommand::Kind::host_memory);
    CHECK_FALSE(parse_link_command("pull 2"));
    CHECK_FALSE(parse_link_command("export 1 0 cumem-fd"));
    CHECK_FALSE(parse_link_command("export 1 64 by-pigeon"));  // no such path
    CHECK_FALSE(parse_link_command("pull 2 64 3 0a1b2c"));     // no path
    CHECK_FALSE(parse_link_command("reboot"));

    HostLinkLine link{true, 51.25, 50.5, PcieLink{5, 16, 0, 0}, "32 MiB"};
    PulledLine wrong;
    wrong.from = 3;
    wrong.path = PeerPath::cumem_fd;
    wrong.status = PeerCopyStatus::wrong_bytes;
    wrong.gb_per_s = 371.5;
    wrong.detail = "1 of 8388608 words wrong, the first at byte 33554432";
    PulledLine refused;
    refused.from = 4;
    refused.status = PeerCopyStatus::skipped;
    refused.no_peer_access = true;
    PulledLine unshared;
    unshared.from = 4;
    unshared.path = PeerPath::cumem_fd;
    unshared.status = PeerCopyStatus::error;
    unshared.path_failed = true;
    unshared.detail = "cuMemImportFromShareableHandle: CUDA error 101";
    const WorkerOutput output = parse_worker_output(
        format_host_link_line(link) + "\n" + format_exported_line({true, PeerPath::cumem_fd, "sock", ""}) + "\n" +
        format_exported_line({false, PeerPath::legacy_ipc, "", "cudaIpcGetMemHandle failed"}) + "\n" +
        format_pulled_line(wrong) + "\n" + format_pulled_line(refused) + "\n" + format_pulled_line(unshared) + "\n" +
        format_host_memory_line({false, 1, "cuMemCreate (host NUMA memory): CUDA error 304"}) + "\n");
    CHECK(output.unparsed.empty());
    REQUIRE(output.host_link);
    CHECK(output.host_link->h2d_gb_per_s == 51.25);
    REQUIRE(output.host_link->link);
    CHECK(output.host_link->link->generation == 5);
    CHECK(output.host_link->link->width == 16);
    REQUIRE(output.exported.count(PeerPath::cumem_fd));
    CHECK(output.exported.at(PeerPath::cumem_fd).handle == "sock");
    REQUIRE(output.exported.count(PeerPath::legacy_ipc));
    CHECK_FALSE(output.exported.at(PeerPath::legacy_ipc).ok);
    REQUIRE(output.pulled.count({3, PeerPath::cumem_fd}));
    CHECK(output.pulled.at({3, PeerPath::cumem_fd}).status == PeerCopyStatus::wrong_bytes);
    CHECK(output.pulled.at({3, PeerPath::cumem_fd}).detail == wrong.detail);
    REQUIRE(output.pulled.count({4, PeerPath::legacy_ipc}));
    CHECK(output.pulled.at({4, PeerPath::legacy_ipc}).no_peer_access);
    REQUIRE(output.pulled.count({4, PeerPath::cumem_fd}));
    CHECK(output.pulled.at({4, PeerPath::cumem_fd}).path_failed);
    CHECK(output.pulled.at({4, PeerPath::cumem_fd}).detail == unshared.detail);
    REQUIRE(output.host_memory);
    CHECK_FALSE(output.host_memory->ok);
    CHECK(output.host_memory->numa_node == 1);
}

TEST_CASE("the NCCL commands and answers round-trip, the library's path whole", "[validation][protocol][links]") {
    const std::string library = "/opt/my venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2";
    const auto id = parse_link_command(format_nccl_id_command(library));
    REQUIRE(id);
    CHECK(id->kind == LinkCommand::Kind::nccl_id);
    CHECK(id->library == library);
    const auto all_reduce = parse_link_command(format_nccl_all_reduce_command(4, 3, 1 << 30, 5, "00ab", library));
    REQUIRE(all_reduce);
    CHECK(all_reduce->kind == LinkCommand::Kind::nccl_all_reduce);
    CHECK(all_reduce->ranks == 4);
    CHECK(all_reduce->gpu == 3);
    CHECK(all_reduce->bytes == std::size_t{1} << 30);
    CHECK(all_reduce->repeats == 5);
    CHECK(all_reduce->handle == "00ab");
    CHECK(all_reduce->library == library);
    CHECK_FALSE(parse_link_command("nccl-id"));                                 // no library
    CHECK_FALSE(parse_link_command("nccl-all-reduce 4 4 1024 5 00ab /lib.so"));  // rank past the ranks
    CHECK_FALSE(parse_link_command("nccl-all-reduce 1 0 1024 5 00ab /lib.so"));  // one rank reduces nothing
    CHECK_FALSE(parse_link_command("nccl-all-reduce 2 0 1024"));                // cut short

    const WorkerOutput output = parse_worker_output(format_nccl_id_line({true, "00ab", ""}) + "\n" +
                                                    format_nccl_line({true, 412.5, 3.3, 322.1, "1024 MiB"}) + "\n");
    CHECK(output.unparsed.empty());
    REQUIRE(output.nccl_id);
    CHECK(output.nccl_id->id == "00ab");
    REQUIRE(output.nccl);
    CHECK(output.nccl->init_ms == 412.5);
    CHECK(output.nccl->bus_gb_per_s == 322.1);
}

TEST_CASE("a fabric-handle line reads back; one whose status this build does not know is no measurement",
          "[validation][fabric]") {
    const WorkerOutput failed =
        parse_worker_output(format_fabric_handle_line({FabricHandleStatus::failed, 800, "cuMemCreate: 800"}) + "\n");
    REQUIRE(failed.fabric_handle);
    CHECK(failed.fabric_handle->status == FabricHandleStatus::failed);
    CHECK(failed.fabric_handle->cuda_error == 800);
    // Only a check that ran and failed may write NCCL_MNNVL_ENABLE=0 (fabric/fabric_judgement.cpp).
    const WorkerOutput unknown =
        parse_worker_output("fabric_handle = { status = \"melted\", cuda_error = 0, detail = \"\" }\n");
    REQUIRE(unknown.fabric_handle);
    CHECK(unknown.fabric_handle->status == FabricHandleStatus::not_measured);
}
