// What each GPU model's full-mode checks (--validate=full) should measure,
// from recipes/throughput.toml: a GPU that falls well below its model's
// figure is shared, throttled or faulty, and the run is marked degraded.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace provision {

struct ThroughputModel {
    std::string model;                     // the table's key, e.g. "H100 SXM"
    std::vector<std::string> names;        // GPU names as NVML reports them
    std::map<std::string, double> tflops;  // check -> expected TFLOP/s; empty: not measured yet
    std::string measured;                  // where and how the figures were measured
};

struct ThroughputTable {
    double degraded_below = 0.6;           // fraction of the expected figure
    std::map<std::string, ThroughputModel> models;

    // The model whose names hold `gpu_name` (ignoring case and surrounding
    // blanks), or nullptr.
    const ThroughputModel* find(const std::string& gpu_name) const;
};

}  // namespace provision
