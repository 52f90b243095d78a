// The throughput verdict of --validate=full: each check's measured TFLOP/s
// against the figure the recipes expect for the GPU's model.  A GPU well
// below it (under ThroughputTable::degraded_below of the figure) is shared
// with other work, throttled or faulty: it still computes correctly, but the
// workload will run slower than the hardware should.
#pragma once

#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "recipe/throughput.h"
#include "validate/validation.h"

namespace provision {

struct ThroughputFigure {
    int gpu = 0;              // index as the workload sees it
    std::string check;        // empty when the note covers a GPU's unmeasured model
    double measured = 0;      // TFLOP/s
    double expected = 0;      // TFLOP/s; 0: the recipes have no figure
    bool degraded = false;
    std::string words;        // measured against expected, for the report's notes
};

// One figure per passed check that measured throughput, for every GPU whose
// model the table knows, and one note per GPU for checks without a figure.
// Nothing without measured throughput (quick validation).
std::vector<ThroughputFigure> compare_throughput(const std::vector<Gpu>& gpus, const std::vector<CheckOutcome>& checks,
                                                 const ThroughputTable& table);

}  // namespace provision
