#include "validate/throughput_health.h"

#include <fmt/format.h>

namespace provision {

std::vector<ThroughputFigure> compare_throughput(const std::vector<Gpu>& gpus, const std::vector<CheckOutcome>& checks,
                                                 const ThroughputTable& table) {
    std::vector<ThroughputFigure> figures;
    for (const Gpu& gpu : gpus) {
        const ThroughputModel* model = table.find(gpu.name);
        std::vector<std::string> without_figure;
        for (const CheckOutcome& check : checks) {
            if (check.gpu != gpu.index || check.status != CheckStatus::passed || !(check.tflops > 0)) continue;
            const double* expected = nullptr;
            if (model)
                if (const auto it = model->tflops.find(check.name); it != model->tflops.end()) expected = &it->second;
            if (!expected) {
                without_figure.push_back(fmt::format("{} {:.0f} TFLOP/s", check.name, check.tflops));
                continue;
            }
            ThroughputFigure figure{gpu.index, check.name, check.tflops, *expected, false, ""};
            const double share = figure.measured / figure.expected;
            figure.degraded = share < table.degraded_below;
            figure.words = fmt::format(
                "GPU {} ({}): {} ran at {:.0f} TFLOP/s, {:.0f} % of the {:.0f} TFLOP/s expected for {}{}", gpu.index,
                gpu.name, check.name, figure.measured, 100 * share, figure.expected, model->model,
                figure.degraded
                    ? fmt::format(" (below {:.0f} %): the GPU is shared with other work, throttled or faulty",
                                  100 * table.degraded_below)
                    : "");
            figures.push_back(std::move(figure));
        }
        if (!without_figure.empty())
            figures.push_back({gpu.index, "", 0, 0, false,
                               fmt::format("GPU {} ({}): no expected figure for {} in the recipes' [throughput] "
                                           "table, so its throughput was not judged; measured {}",
                                           gpu.index, gpu.name,
                                           !model                ? std::string("this model")
                                           : model->tflops.empty() ? fmt::format("this model ({}, not measured yet)",
                                                                               model->model)
                                                                   : "some checks of " + model->model,
                                           fmt::join(without_figure, ", "))});
    }
    return figures;
}

}  // namespace provision
