// The cuDNN library a torch install loads, found by file name without
// loading it.  A system install (an NGC container, the CUDA base images'
// libcudnn9 packages) names its version in the file: libcudnn.so.9.10.2,
// libcudnn_graph.so.9.10.2.  A wheel's copy (nvidia/cudnn/lib/libcudnn.so.9)
// carries the major version alone: its version is its dist-info's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::native {

struct CudnnFile {
    std::string path;
    std::string version;  // "9.10.2"; empty when the name holds the major version alone
};

// "9.10.2" of "libcudnn.so.9.10.2" or "libcudnn_graph.so.9.10.2"; "" of
// "libcudnn.so.9"; nullopt for any other name.  Each part is at most six
// digits.
std::optional<std::string> cudnn_version_in_name(std::string_view name);

// The first of `folders` that holds a cuDNN library, and its file there
// (one with a full version in its name preferred); nothing when none does.
// Each folder is listed once, names starting "libcudnn" only.
std::optional<CudnnFile> find_cudnn_file(const std::vector<std::string>& folders);

}  // namespace provision::native
