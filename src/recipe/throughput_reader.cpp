#include "recipe/throughput_reader.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/text.h"
#include "toml/toml_reader.h"

namespace provision {

namespace {

std::string folded(const std::string& text) { return lowercase(trimmed(text, " \t")); }

double positive_number(const toml::node& node, const std::string& file, const std::string& what) {
    const std::optional<double> value = node.value<double>();  // integers too
    if (!value || !(*value > 0)) throw_at(node, file, fmt::format("{} must be a positive number", what));
    return *value;
}

void read_model(const std::string& key, const toml::table& table, const std::string& file, ThroughputTable& into,
                const std::function<void(const std::string&, const toml::node&)>& refer_check) {
    const std::string where = fmt::format("[throughput.models.\"{}\"]", echoed(key));
    TableReader reader(table, file, where);
    ThroughputModel& model = into.models[key];
    model.model = key;
    if (auto names = reader.string_array("names")) model.names = *names;
    if (auto measured = reader.string("measured")) model.measured = *measured;
    if (const toml::table* tflops = reader.table("tflops")) {
        for (const auto& [check, value] : *tflops) {
            const std::string name(check.str());
            model.tflops[name] = positive_number(value, file, fmt::format("'tflops.\"{}\"' of {}", echoed(name), where));
            refer_check(name, value);
        }
    }
    reader.reject_unknown_keys({"names", "measured", "tflops"});
    if (model.names.empty()) throw_at(table, file, fmt::format("{} names no GPU ('names')", where));
}

}  // namespace

const ThroughputModel* ThroughputTable::find(const std::string& gpu_name) const {
    const std::string wanted = folded(gpu_name);
    for (const auto& [key, model] : models)
        for (const auto& name : model.names)
            if (folded(name) == wanted) return &model;
    return nullptr;
}

void read_throughput(const toml::table& table, const std::string& file, ThroughputTable& into,
                     const std::function<void(const std::string& check, const toml::node& where)>& refer_check) {
    TableReader reader(table, file, "[throughput]");
    if (const toml::node* fraction = reader.node("degraded_below")) {
        const double value = positive_number(*fraction, file, "'degraded_below' in [throughput]");
        if (value > 1) throw_at(*fraction, file, "'degraded_below' in [throughput] is a fraction, at most 1");
        into.degraded_below = value;
    }
    if (const toml::table* models = reader.table("models")) {
        for (const auto& [key, value] : *models) {
            const std::string name(key.str());
            if (!value.is_table())
                throw_at(value, file, fmt::format("[throughput.models.\"{}\"] must be a table", echoed(name)));
            read_model(name, *value.as_table(), file, into, refer_check);
        }
    }
    reader.reject_unknown_keys({"degraded_below", "models"});
}

}  // namespace provision
