#include "fake_machine.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "toml/toml_reader.h"

namespace fake {

namespace {

// An int from `low` to `high` (0 when the key is absent), read as the
// fixture reader reads every integer.
int integer(provision::TableReader& reader, const std::string& key, int low = std::numeric_limits<int>::min(),
            int high = std::numeric_limits<int>::max()) {
    return static_cast<int>(reader.integer(key, low, high).value_or(0));
}

std::vector<std::size_t> positions(provision::TableReader& reader, const std::string& key, std::size_t gpus) {
    std::vector<std::size_t> values;
    const toml::node* node = reader.node(key);
    if (!node) return values;
    const toml::array* array = node->as_array();
    if (!array) provision::throw_at(*node, reader.file(), fmt::format("'{}' must be an array of GPU positions", key));
    for (const toml::node& element : *array)
        values.push_back(static_cast<std::size_t>(provision::integer_in_range(
            element, reader.file(), fmt::format("each of '{}' (a GPU position)", key), 0,
            static_cast<std::int64_t>(gpus) - 1)));
    return values;
}

void read_faults(const toml::table& table, const std::string& file, Machine& machine) {
    provision::TableReader reader(table, file, "[faults]");
    reader.reject_unknown_keys({"nvml_init_error", "nvml_init_delay_ms", "nvml_init_slow_ms", "cuda_init_error", "cuda_init_delay_ms", "context_delay_ms",
                                "handle_open_delay_ms", "contexts_meet", "openings_meet", "host_numa_id", "fabric_states", "fabric_version", "fabric_cluster", "fabric_cliques", "fabric_health_mask", "fabric_health", "fabric_handles", "listed_processes", "lost_gpus", "cuda_order", "failing_calls", "link_error_rise", "xid_events"});
    const std::size_t gpus = machine.fixture.gpus.size();
    machine.nvml_init_error = integer(reader, "nvml_init_error");
    machine.nvml_init_delay_ms = integer(reader, "nvml_init_delay_ms", 0);
    machine.cuda_init_error = integer(reader, "cuda_init_error");
    machine.cuda_init_delay_ms = integer(reader, "cuda_init_delay_ms", 0);
    machine.context_delay_ms = integer(reader, "context_delay_ms", 0);
    machine.handle_open_delay_ms = integer(reader, "handle_open_delay_ms", 0);
    machine.contexts_meet = integer(reader, "contexts_meet", 0);
    machine.openings_meet = integer(reader, "openings_meet", 0);
    machine.host_numa_id = reader.node("host_numa_id") ? integer(reader, "host_numa_id") : 0;
    machine.nvml_init_slow_ms = integer(reader, "nvml_init_slow_ms", 0);
    if (const toml::node* processes = reader.node("listed_processes")) {
        const toml::array* array = processes->as_array();
        if (!array) provision::throw_at(*processes, file, "'listed_processes' must be an array of tables");
        for (const toml::node& element : *array) {
            if (!element.is_table()) provision::throw_at(element, file, "each listed process must be a table");
            provision::TableReader process(*element.as_table(), file, "a listed process");
            process.reject_unknown_keys({"pid", "mib"});
            machine.listed_processes.push_back(
                {integer(process, "pid", 0), static_cast<unsigned long long>(integer(process, "mib", 0))});
        }
    }
    if (const toml::node* states = reader.node("fabric_states")) {
        const toml::array* array = states->as_array();
        if (!array || array->size() != gpus) provision::throw_at(*states, file, "'fabric_states' names one state a GPU");
        for (const toml::node& element : *array) {
            const std::string state = element.value_or(std::string());
            const int value = state == "not-supported" ? 0 : state == "not-started" ? 1 : state == "in-progress" ? 2
                              : state == "completed"  ? 3 : -1;
            if (value < 0) provision::throw_at(element, file, "a fabric state is not-supported, not-started, in-progress or completed");
            machine.fabric_states.push_back(value);
        }
    }
    machine.fabric_version = reader.node("fabric_version") ? integer(reader, "fabric_version", 1, 4) : 4;
    if (const auto cluster = reader.string("fabric_cluster")) {
        if (cluster->size() != 32 || cluster->find_first_not_of("0123456789abcdef") != std::string::npos)
            provision::throw_at(*reader.node("fabric_cluster"), file, "'fabric_cluster' is 32 lowercase hex digits");
        for (std::size_t i = 0; i < 16; ++i)
            machine.fabric_cluster[i] = static_cast<unsigned char>(std::stoul(cluster->substr(2 * i, 2), nullptr, 16));
    }
    const auto per_gpu = [&](const char* key, auto&& each) {
        const toml::node* node = reader.node(key);
        if (!node) return;
        const toml::array* array = node->as_array();
        if (!array || array->size() != gpus) provision::throw_at(*node, file, fmt::format("'{}' names one value a GPU", key));
        for (const toml::node& element : *array) each(element);
    };
    per_gpu("fabric_cliques", [&](const toml::node& element) {
        machine.fabric_cliques.push_back(static_cast<unsigned>(element.value_or(std::int64_t{0})));
    });
    per_gpu("fabric_health_mask", [&](const toml::node& element) {
        machine.fabric_health_masks.push_back(static_cast<unsigned>(element.value_or(std::int64_t{0})));
    });
    per_gpu("fabric_health", [&](const toml::node& element) {
        const std::string summary = element.value_or(std::string());
        const int value = summary == "healthy" ? 1 : summary == "unhealthy" ? 2 : summary == "limited-capacity" ? 3 : -1;
        if (value < 0) provision::throw_at(element, file, "a fabric health is healthy, unhealthy or limited-capacity");
        machine.fabric_health.push_back(value);
    });
    if (const auto handles = reader.string("fabric_handles")) {
        if (*handles != "supported" && *handles != "unsupported")
            provision::throw_at(*reader.node("fabric_handles"), file, "'fabric_handles' is supported or unsupported");
        machine.fabric_handles = *handles == "supported";
    }
    if (const toml::node* rise = reader.node("link_error_rise"))
        machine.link_error_rise = provision::read_link_error_counts(*rise, file, "'link_error_rise' in [faults]");
    if (const toml::node* events = reader.node("xid_events")) {
        const toml::array* array = events->as_array();
        if (!array) provision::throw_at(*events, file, "'xid_events' must be an array of tables");
        for (const toml::node& element : *array) {
            if (!element.is_table()) provision::throw_at(element, file, "each Xid event must be a table");
            provision::TableReader event(*element.as_table(), file, "an Xid event");
            event.reject_unknown_keys({"gpu", "xid"});
            machine.xid_events.push_back({static_cast<std::size_t>(integer(event, "gpu", 0, static_cast<int>(gpus) - 1)),
                                          integer(event, "xid", 0, 9999)});
        }
    }
    machine.lost_gpus = positions(reader, "lost_gpus", gpus);
    machine.cuda_order = positions(reader, "cuda_order", gpus);
    if (const toml::node* calls = reader.node("failing_calls")) {
        const toml::array* array = calls->as_array();
        if (!array) provision::throw_at(*calls, file, "'failing_calls' must be an array of tables");
        for (const toml::node& element : *array) {
            if (!element.is_table()) provision::throw_at(element, file, "each failing call must be a table");
            provision::TableReader call(*element.as_table(), file, "a failing call");
            call.reject_unknown_keys({"function", "gpu", "error"});
            FailingCall failing;
            failing.function = call.string("function").value_or("");
            failing.gpu = static_cast<std::size_t>(integer(call, "gpu", 0, static_cast<int>(gpus) - 1));
            failing.error = integer(call, "error");
            machine.failing_calls.push_back(failing);
        }
    }
}

}  // namespace

bool Machine::lost(std::size_t gpu) const {
    return std::find(lost_gpus.begin(), lost_gpus.end(), gpu) != lost_gpus.end();
}

int Machine::failure(const std::string& function, std::size_t gpu) const {
    for (const auto& call : failing_calls)
        if (call.function == function && call.gpu == gpu) return call.error;
    return 0;
}

std::shared_ptr<const Machine> load_machine(const char* library) {
    const char* path = std::getenv("PROVISION_FAKE_GPU_FIXTURE");
    if (!path || !*path) {
        fmt::print(stderr, "{}: PROVISION_FAKE_GPU_FIXTURE is not set\n", library);
        return nullptr;
    }
    try {
        const toml::table root = provision::parse_gpu_fixture_file(path);
        auto machine = std::make_shared<Machine>();
        machine->fixture = provision::read_gpu_fixture(root, path, {"faults"});
        if (const toml::table* faults = root.get_as<toml::table>("faults")) read_faults(*faults, path, *machine);
        return machine;
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: {}\n", library, error.what());
        return nullptr;
    }
}

int cuda_version_number(const std::string& text) {
    const auto version = provision::ComputeCapability::parse(text);
    return version ? version->major * 1000 + version->minor * 10 : 0;
}

}  // namespace fake
