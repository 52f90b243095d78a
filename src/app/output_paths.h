// The files one run writes (the env file, --node-labels, --metrics), checked
// together before anything is written: each path must be able to name a
// file, and no two may name the same one, however spelled ("x" and "./x",
// "a/../x", a symbolic or hard link, a file not there yet under two names).
// Two outputs in one file would leave only the last one written.
#pragma once

#include <string>
#include <vector>

namespace provision {

struct OutputPath {
    std::string path;
    std::string source;  // the flag or variable that gave it, for messages ("--metrics", "PROVISION_METRICS")
};

// Error(usage) naming the source: a path that ends in '/' (or in "." or
// ".."), or two paths that lead to one file (src/core/file_identity.h).
void check_output_paths(const std::vector<OutputPath>& outputs);

}  // namespace provision
