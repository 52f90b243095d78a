// Where a value came from in a file, so an error about it can point there.
#pragma once

#include <string>

namespace provision {

struct SourceRef {
    std::string file;
    int line = 0;
    int column = 0;
    std::string str() const;  // "file:line:column"
};

}  // namespace provision
