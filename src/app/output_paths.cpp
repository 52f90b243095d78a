#include "app/output_paths.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/file_identity.h"
#include "core/text.h"

namespace provision {

void check_output_paths(const std::vector<OutputPath>& outputs) {
    std::vector<PathTarget> targets;
    for (const auto& output : outputs) {
        if (const auto problem = file_path_problem(output.path))
            throw Error(ExitCode::usage, fmt::format("{} {}: {}; name a file", output.source,
                                                     printable(output.path, 256), *problem));
        targets.push_back(path_target(output.path));
    }
    for (std::size_t i = 0; i < outputs.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (targets[i] == targets[j])
                throw Error(ExitCode::usage,
                            fmt::format("{} {} and {} {} name the same file; each output needs a file of its own",
                                        outputs[j].source, printable(outputs[j].path, 256), outputs[i].source,
                                        printable(outputs[i].path, 256)));
}

}  // namespace provision
