// The CUDA_VISIBLE_DEVICES values measured against CUDA on a one-GPU machine
// (tests/fixtures/cuda_visible_devices.tsv), with a GPU's UUID filled in.
#pragma once

#include <cstddef>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace test_support {

struct CudaVisibleDevicesRow {
    std::optional<std::string> value;  // nothing: the variable unset
    std::size_t cuda_count = 0;        // how many GPUs CUDA listed
};

// `uuid`: the one GPU's UUID without "GPU-", lower-case hex.
inline std::vector<CudaVisibleDevicesRow> cuda_visible_devices_table(const std::string& tsv_path,
                                                                    const std::string& uuid) {
    std::string upper = uuid;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::vector<std::pair<std::string, std::string>> placeholders = {
        {"<uuid>", uuid}, {"<UUID>", upper}, {"<uuid8>", uuid.substr(0, 8)}, {"<uuid6>", uuid.substr(0, 6)},
        {"<uuid4>", uuid.substr(0, 4)},
        {"\\t", "\t"}};
    std::ifstream in(tsv_path);
    std::vector<CudaVisibleDevicesRow> rows;
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (header) {  // "value cuInit count uuids"
            header = false;
            continue;
        }
        std::istringstream fields(line);
        std::string value, status, count;
        std::getline(fields, value, '\t');
        std::getline(fields, status, '\t');
        std::getline(fields, count, '\t');
        CudaVisibleDevicesRow row;
        row.cuda_count = std::stoul(count);
        if (value == "(empty)") {
            row.value = "";
        } else if (value != "(unset)") {
            for (const auto& [from, to] : placeholders)
                for (std::size_t at = value.find(from); at != std::string::npos; at = value.find(from, at + to.size()))
                    value.replace(at, from.size(), to);
            row.value = value;
        }
        rows.push_back(row);
    }
    return rows;
}

}  // namespace test_support
