// The run as Prometheus metrics, in the text format node-exporter's
// textfile collector reads (*.prom): one HELP and one TYPE line per family
// before its samples, no timestamps, label values escaped, names that pass
// `promtool check metrics` without a lint complaint (base units: seconds;
// `_total` only on counters).  Label names follow dcgm-exporter's where the
// same thing is meant (gpu, UUID, model_name), so dashboards can join them.
// docs/DESIGN.md lists every family.
#pragma once

#include <string>
#include <string_view>

#include "publish/published_run.h"

namespace provision {

std::string render_metrics(const PublishedRun& run);

// A label value in the text format: `\`, `"` and line feeds escaped, other
// control characters and bytes that are not UTF-8 replaced by U+FFFD.
std::string escape_label_value(std::string_view value);

// A sample value: the shortest text that reads back as `value`; NaN and
// infinities as Prometheus writes them (NaN, +Inf, -Inf).
std::string sample_value(double value);

}  // namespace provision
