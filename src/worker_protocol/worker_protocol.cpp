#include "worker_protocol/worker_protocol.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

namespace provision {
namespace {

std::string one_line(const toml::table& document) {
    std::ostringstream out;
    // No literal or multi-line strings: every escape stays on the one line.
    out << toml::toml_formatter(document, toml::format_flags::none);
    return out.str();
}

toml::table inline_table(toml::table fields) {
    fields.is_inline(true);  // inline tables are written on one line
    return fields;
}

std::int64_t nanoseconds(MonotonicTime at) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

MonotonicTime time_from(std::int64_t ns) {
    return MonotonicTime(std::chrono::duration_cast<MonotonicTime::duration>(std::chrono::nanoseconds(ns)));
}

std::optional<CheckOutcome> result_from(const toml::table& fields) {
    const auto name = fields["name"].value<std::string>();
    const auto status = fields["status"].value<std::string>();
    if (!name || !status) return std::nullopt;
    CheckOutcome result{};
    result.name = *name;
    result.max_rel_error = fields["max_rel_error"].value_or(0.0);
    result.tolerance = fields["tolerance"].value_or(0.0);
    result.ms = fields["ms"].value_or(0.0);
    result.tflops = fields["tflops"].value_or(0.0);
    result.wall_ms = fields["wall_ms"].value_or(0.0);
    result.detail = fields["detail"].value_or(std::string());
    // A worker reports passed, failed, unsupported or error; the parent
    // decides timeout and not-measured.
    const auto known = parse_check_status(*status);
    if (known && *known != CheckStatus::timeout && *known != CheckStatus::not_measured) {
        result.status = *known;
    } else {
        result.status = CheckStatus::error;
        result.detail = fmt::format("the worker reported an unknown status {}", quoted(*status));
    }
    return result;
}

std::string_view pulled_word(const PulledLine& line) {
    if (line.no_peer_access) return "no-peer-access";
    if (line.path_failed) return "path-failed";
    switch (line.status) {
        case PeerCopyStatus::passed: return "passed";
        case PeerCopyStatus::wrong_bytes: return "wrong-bytes";
        default: return "error";
    }
}

PeerPath path_from(const toml::table& fields) {
    return parse_peer_path(fields["path"].value_or(std::string())).value_or(PeerPath::legacy_ipc);
}

PulledLine pulled_from(const toml::table& fields) {
    PulledLine line;
    line.from = static_cast<int>(fields["from"].value_or(std::int64_t{-1}));
    line.path = path_from(fields);
    line.gb_per_s = fields["gb_per_s"].value_or(0.0);
    line.detail = fields["detail"].value_or(std::string());
    const std::string status = fields["status"].value_or(std::string());
    if (status == "passed") {
        line.status = PeerCopyStatus::passed;
    } else if (status == "wrong-bytes") {
        line.status = PeerCopyStatus::wrong_bytes;
    } else if (status == "no-peer-access") {
        line.status = PeerCopyStatus::skipped;
        line.no_peer_access = true;
    } else {
        line.status = PeerCopyStatus::error;
        line.path_failed = status == "path-failed";
        if (status != "error" && status != "path-failed")
            line.detail = fmt::format("the worker reported an unknown status {}", quoted(status));
    }
    return line;
}

HostLinkLine host_link_from(const toml::table& fields) {
    HostLinkLine line;
    line.ok = fields["ok"].value_or(false);
    line.h2d_gb_per_s = fields["h2d_gb_per_s"].value_or(0.0);
    line.d2h_gb_per_s = fields["d2h_gb_per_s"].value_or(0.0);
    line.detail = fields["detail"].value_or(std::string());
    const auto generation = fields["generation"].value<std::int64_t>();
    const auto width = fields["width"].value<std::int64_t>();
    if (generation && width && *generation > 0 && *width > 0) {
        PcieLink link;
        link.generation = static_cast<unsigned>(*generation);
        link.width = static_cast<unsigned>(*width);
        line.link = link;
    }
    return line;
}

// Calls `each` with every line of `text` that its newline has ended (without
// the newline): a last line without one is still being written.
template <typename Each>
void for_each_whole_line(std::string_view text, Each each) {
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string_view::npos; start = end + 1)
        each(text.substr(start, end - start));
}

std::optional<toml::table> parse_line(const std::string& line) {
    try {
        return toml::parse(line);
    } catch (const toml::parse_error&) {
        return std::nullopt;
    }
}

}  // namespace

std::vector<std::string> worker_arguments(const std::vector<WorkerGpu>& gpus, const WorkerCommand& options) {
    std::vector<std::string> args = {"__check-worker", "--mode", std::string(to_string(options.mode))};
    const bool renamed = std::any_of(gpus.begin(), gpus.end(), [](const WorkerGpu& gpu) { return gpu.workload_gpu != gpu.cuda_device; });
    for (const WorkerGpu& gpu : gpus) {
        args.insert(args.end(), {"--gpu", std::to_string(gpu.cuda_device)});
        if (renamed) args.insert(args.end(), {"--as", std::to_string(gpu.workload_gpu)});
    }
    if (!options.timeline.empty()) args.insert(args.end(), {"--timeline", options.timeline});
    if (!options.fault.empty()) {
        args.push_back("--fault");
        args.push_back(options.fault);
    }
    if (options.simulate) {
        args.push_back("--simulate");
        args.push_back("--cuda-library");
        args.push_back(options.cuda_library);
    }
    return args;
}

std::string tag_lines(int gpu, const std::string& text) {
    std::string tagged;
    for_each_whole_line(text, [&](std::string_view line) { tagged += fmt::format("{}:{}\n", gpu, line); });
    return tagged;
}

std::string format_end_of_input(int gpu) { return fmt::format("{}!\n", gpu); }

std::string lines_tagged(int gpu, const std::string& output) {
    const std::string tag = fmt::format("{}:", gpu);
    std::string lines;
    for_each_whole_line(output, [&](std::string_view line) {
        if (!line.starts_with(tag)) return;
        lines += line.substr(tag.size());
        lines += '\n';
    });
    return lines;
}

std::optional<TaggedInput> parse_tagged_input(const std::string& line) {
    const std::size_t mark = line.find_first_of(":!");
    if (mark == 0 || mark == std::string::npos || line.find_first_not_of("0123456789") != mark || mark > 9)
        return std::nullopt;
    TaggedInput input;
    input.gpu = std::stoi(line.substr(0, mark));
    input.end = line[mark] == '!';
    if (input.end && mark + 1 != line.size()) return std::nullopt;
    input.text = line.substr(mark + 1);
    return input;
}

std::string format_check_list(const std::vector<std::string>& checks) {
    std::string text;
    for (const auto& check : checks) text += check + "\n";
    return text + "\n";
}

std::string format_ready_line(const WorkerReady& ready) {
    toml::table fields{{"at_ns", nanoseconds(ready.at)}, {"loaded_ns", nanoseconds(ready.loaded)}, {"open_ms", ready.open_ms}};
    if (!ready.uuid.empty()) fields.insert("uuid", ready.uuid);
    if (!ready.capability.empty()) fields.insert("capability", ready.capability);
    if (!ready.error.empty()) fields.insert("error", ready.error);
    if (ready.full) fields.insert("full", true);
    return one_line(toml::table{{"ready", inline_table(std::move(fields))}});
}

std::string format_done_line(MonotonicTime at, double waited_ms) {
    return one_line(toml::table{{"done", inline_table(toml::table{{"at_ns", nanoseconds(at)}, {"waited_ms", waited_ms}})}});
}

std::string format_host_link_command(std::size_t bytes, int repeats) {
    return fmt::format("host-link {} {}\n", bytes, repeats);
}

std::string format_export_command(int gpu, std::size_t bytes, PeerPath path) {
    return fmt::format("export {} {} {}\n", gpu, bytes, to_string(path));
}

std::string format_pull_command(int gpu, std::size_t bytes, int repeats, PeerPath path, const std::string& handle) {
    return fmt::format("pull {} {} {} {} {}\n", gpu, bytes, repeats, to_string(path), handle);
}

std::string format_host_memory_command() { return "host-memory\n"; }

std::string format_fabric_handle_command() { return "fabric-handle\n"; }

std::string format_nccl_id_command(const std::string& library) { return fmt::format("nccl-id {}\n", library); }

std::string format_nccl_all_reduce_command(int ranks, int rank, std::size_t bytes, int repeats, const std::string& id,
                                           const std::string& library) {
    return fmt::format("nccl-all-reduce {} {} {} {} {} {}\n", ranks, rank, bytes, repeats, id, library);
}

std::string format_nccl_id_line(const NcclIdLine& line) {
    return one_line(toml::table{
        {"nccl_id", inline_table(toml::table{{"ok", line.ok}, {"id", line.id}, {"detail", line.detail}})}});
}

std::string format_nccl_line(const NcclLine& line) {
    return one_line(toml::table{{"nccl", inline_table(toml::table{{"ok", line.ok},
                                                                  {"init_ms", line.init_ms},
                                                                  {"ms", line.ms},
                                                                  {"bus_gb_per_s", line.bus_gb_per_s},
                                                                  {"detail", line.detail},
                                                                  {"transport", line.transport}})}});
}

std::optional<LinkCommand> parse_link_command(const std::string& line) {
    std::istringstream words(line);
    std::string verb, path;
    words >> verb;
    LinkCommand command;
    if (verb == "host-link") {
        command.kind = LinkCommand::Kind::host_link;
        words >> command.bytes >> command.repeats;
    } else if (verb == "export") {
        command.kind = LinkCommand::Kind::export_buffer;
        words >> command.gpu >> command.bytes >> path;
    } else if (verb == "pull") {
        command.kind = LinkCommand::Kind::pull;
        words >> command.gpu >> command.bytes >> command.repeats >> path >> command.handle;
    } else if (verb == "host-memory") {
        command.kind = LinkCommand::Kind::host_memory;
        return command;
    } else if (verb == "fabric-handle") {
        command.kind = LinkCommand::Kind::fabric_handle;
        return command;
    } else if (verb == "nccl-id" || verb == "nccl-all-reduce") {
        command.kind = verb == "nccl-id" ? LinkCommand::Kind::nccl_id : LinkCommand::Kind::nccl_all_reduce;
        if (command.kind == LinkCommand::Kind::nccl_all_reduce)
            words >> command.ranks >> command.gpu >> command.bytes >> command.repeats >> command.handle;
        std::getline(words >> std::ws, command.library);  // a path: the rest of the line
        if (!words.eof() && !words) return std::nullopt;
        if (command.library.empty()) return std::nullopt;
        if (command.kind == LinkCommand::Kind::nccl_all_reduce &&
            (command.ranks < 2 || command.gpu < 0 || command.gpu >= command.ranks || command.bytes == 0 ||
             command.repeats < 1 || command.handle.empty()))
            return std::nullopt;
        return command;
    } else {
        return std::nullopt;
    }
    if (!words || command.bytes == 0 || command.repeats < 1) return std::nullopt;
    if (command.kind != LinkCommand::Kind::host_link) {
        const auto parsed = parse_peer_path(path);
        if (!parsed) return std::nullopt;
        command.path = *parsed;
    }
    return command;
}

std::string format_host_link_line(const HostLinkLine& line) {
    toml::table fields{{"ok", line.ok},
                       {"h2d_gb_per_s", line.h2d_gb_per_s},
                       {"d2h_gb_per_s", line.d2h_gb_per_s},
                       {"detail", line.detail}};
    if (line.link) {
        fields.insert("generation", static_cast<std::int64_t>(line.link->generation));
        fields.insert("width", static_cast<std::int64_t>(line.link->width));
    }
    return one_line(toml::table{{"host_link", inline_table(std::move(fields))}});
}

std::string format_exported_line(const ExportedLine& line) {
    return one_line(toml::table{{"exported", inline_table(toml::table{{"ok", line.ok},
                                                                      {"path", std::string(to_string(line.path))},
                                                                      {"handle", line.handle},
                                                                      {"detail", line.detail}})}});
}

std::string format_pulled_line(const PulledLine& line) {
    return one_line(toml::table{{"pulled", inline_table(toml::table{{"from", static_cast<std::int64_t>(line.from)},
                                                                    {"path", std::string(to_string(line.path))},
                                                                    {"status", std::string(pulled_word(line))},
                                                                    {"gb_per_s", line.gb_per_s},
                                                                    {"detail", line.detail}})}});
}

std::string format_host_memory_line(const HostMemoryLine& line) {
    return one_line(toml::table{{"host_memory", inline_table(toml::table{{"ok", line.ok},
                                                                         {"numa_node", std::int64_t{line.numa_node}},
                                                                         {"detail", line.detail}})}});
}

std::string format_fabric_handle_line(const FabricHandleLine& line) {
    return one_line(toml::table{{"fabric_handle", inline_table(toml::table{{"status", std::string(to_string(line.status))},
                                                                           {"cuda_error", std::int64_t{line.cuda_error}},
                                                                           {"detail", line.detail}})}});
}

std::string format_result_line(const CheckOutcome& result) {
    toml::table fields{{"name", result.name},
                       {"status", std::string(to_string(result.status))},
                       {"max_rel_error", result.max_rel_error},
                       {"tolerance", result.tolerance},
                       {"ms", result.ms},
                       {"tflops", result.tflops},
                       {"wall_ms", result.wall_ms},
                       {"detail", result.detail}};
    return one_line(toml::table{{"result", inline_table(std::move(fields))}});
}

std::optional<CheckOutcome> parse_result_line(const std::string& line) {
    const auto document = parse_line(line);
    if (!document) return std::nullopt;
    const toml::table* fields = (*document)["result"].as_table();
    return fields ? result_from(*fields) : std::nullopt;
}

WorkerOutput parse_worker_output(const std::string& text) {
    WorkerOutput output;
    for_each_whole_line(text, [&](std::string_view whole) {
        const std::string line(whole);
        if (line.find_first_not_of(" \t\r") == std::string::npos) return;
        const auto document = parse_line(line);
        if (const toml::table* fields = document ? (*document)["result"].as_table() : nullptr) {
            if (auto result = result_from(*fields)) {
                output.results.insert_or_assign(result->name, std::move(*result));
                return;
            }
        } else if (const toml::table* ready = document ? (*document)["ready"].as_table() : nullptr) {
            WorkerReady fields;
            fields.at = time_from((*ready)["at_ns"].value_or(std::int64_t{0}));
            fields.loaded = time_from((*ready)["loaded_ns"].value_or(std::int64_t{0}));
            fields.open_ms = (*ready)["open_ms"].value_or(0.0);
            fields.uuid = (*ready)["uuid"].value_or(std::string());
            fields.capability = (*ready)["capability"].value_or(std::string());
            fields.error = (*ready)["error"].value_or(std::string());
            fields.full = (*ready)["full"].value_or(false);
            output.ready = std::move(fields);
            return;
        } else if (const toml::table* host_link = document ? (*document)["host_link"].as_table() : nullptr) {
            output.host_link = host_link_from(*host_link);
            return;
        } else if (const toml::table* exported = document ? (*document)["exported"].as_table() : nullptr) {
            ExportedLine line{(*exported)["ok"].value_or(false), path_from(*exported),
                              (*exported)["handle"].value_or(std::string()), (*exported)["detail"].value_or(std::string())};
            output.exported.insert_or_assign(line.path, std::move(line));
            return;
        } else if (const toml::table* pulled = document ? (*document)["pulled"].as_table() : nullptr) {
            PulledLine line = pulled_from(*pulled);
            output.pulled.insert_or_assign({line.from, line.path}, std::move(line));
            return;
        } else if (const toml::table* id = document ? (*document)["nccl_id"].as_table() : nullptr) {
            output.nccl_id = NcclIdLine{(*id)["ok"].value_or(false), (*id)["id"].value_or(std::string()),
                                        (*id)["detail"].value_or(std::string())};
            return;
        } else if (const toml::table* nccl = document ? (*document)["nccl"].as_table() : nullptr) {
            output.nccl = NcclLine{(*nccl)["ok"].value_or(false), (*nccl)["init_ms"].value_or(0.0),
                                   (*nccl)["ms"].value_or(0.0), (*nccl)["bus_gb_per_s"].value_or(0.0),
                                   (*nccl)["detail"].value_or(std::string()),
                                   (*nccl)["transport"].value_or(std::string())};
            return;
        } else if (const toml::table* memory = document ? (*document)["host_memory"].as_table() : nullptr) {
            output.host_memory = HostMemoryLine{(*memory)["ok"].value_or(false),
                                                static_cast<int>((*memory)["numa_node"].value_or(std::int64_t{-1})),
                                                (*memory)["detail"].value_or(std::string())};
            return;
        } else if (const toml::table* fabric = document ? (*document)["fabric_handle"].as_table() : nullptr) {
            const auto status = parse_fabric_handle_status((*fabric)["status"].value_or(std::string()));
            output.fabric_handle =
                // A status this build does not know is no measurement: never a failure that writes a setting.
                FabricHandleLine{status.value_or(FabricHandleStatus::not_measured),
                                 static_cast<int>((*fabric)["cuda_error"].value_or(std::int64_t{0})),
                                 (*fabric)["detail"].value_or(std::string())};
            return;
        } else if (const toml::table* done = document ? (*document)["done"].as_table() : nullptr) {
            output.done = time_from((*done)["at_ns"].value_or(std::int64_t{0}));
            return;
        }
        if (output.unparsed.empty()) output.unparsed = line;
    });
    return output;
}

std::string fault_for_check(const std::string& spec, const std::string& check) {
    std::istringstream entries(spec);
    for (std::string entry; std::getline(entries, entry, ',');) {
        const auto equals = entry.find('=');
        if (equals == std::string::npos) continue;
        const std::string pattern = entry.substr(0, equals);
        if (pattern == "*" || pattern == check) return entry.substr(equals + 1);
    }
    return {};
}

constexpr std::size_t kQuoteLimit = 200;

std::string quoted(std::string text) {
    if (text.size() > kQuoteLimit) text = text.substr(0, kQuoteLimit) + "...";
    return fmt::format("'{}'", text);
}

}  // namespace provision
