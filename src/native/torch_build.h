// What a torch (and an xFormers) installation was built for, read from the
// small files the wheels carry, without starting Python.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "native/read_result.h"

namespace provision::native {

enum class TorchBackend { cuda, rocm, cpu };

// "cuda", "rocm", "cpu".
std::string_view to_string(TorchBackend backend);

struct TorchBuild {
    std::string version;              // "2.11.0+cu130"
    std::optional<std::string> cuda;  // "13.0"; empty for CPU and ROCm builds
    std::optional<std::string> hip;   // "6.4.43482-0f2d60242" for ROCm builds
    TorchBackend backend = TorchBackend::cpu;
};

// torch/version.py: `__version__ = '2.11.0+cu130'`, `cuda: Optional[str] =
// '13.0'` (or `None`), `hip: Optional[str] = None`; older torch writes
// `cuda = '11.8'`.  Only these simple assignments are read; the file is
// never run.  nullopt when there is no `__version__`.
std::optional<TorchBuild> parse_torch_version_py(std::string_view text);
ReadResult<TorchBuild> read_torch_build(const std::string& version_py_path);

struct XformersBuild {
    std::optional<std::string> torch;   // the torch it was built against, "2.10.0+cu128"
    std::optional<std::string> cuda;    // "12.8" (stored as 1208); empty for a CPU build
    std::optional<std::string> python;  // "3.12.3"
};

// xformers/cpp_lib.json: {"version": {"cuda": 1208, "torch": "2.10.0+cu128", "python": "3.12.3", ...}, ...}.
// nullopt when the text is not JSON or has no "version" object.
std::optional<XformersBuild> parse_xformers_cpp_lib(std::string_view json);
ReadResult<XformersBuild> read_xformers_build(const std::string& cpp_lib_json_path);

// A small text file read whole (at most `max_bytes`), refusing anything but
// a regular file.
ReadResult<std::string> read_small_file(const std::string& path, std::size_t max_bytes = 1 << 20);

}  // namespace provision::native
