// What a script's "#!" line asks the kernel to run it with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

struct Shebang {
    std::string program;             // "/opt/venv/bin/python3", or "python3" when through env
    bool through_env = false;        // "#!/usr/bin/env python3": `program` is looked up on PATH
    std::vector<std::string> arguments;  // what follows the program on the line
};

// Reads the start of a file: nullopt when it has no "#!" line.  Knows
// "#!/usr/bin/env [-S] [NAME=VALUE ...] program ..." and the form pip and
// distlib write when the interpreter's path is too long for a "#!" line:
//   #!/bin/sh
//   '''exec' "/very/long/venv/bin/python3" "$0" "$@"
std::optional<Shebang> parse_shebang(std::string_view head);

}  // namespace provision
