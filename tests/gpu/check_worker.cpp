// Stands in for "provision __check-worker" in the GPU tests, so they do not
// depend on the command line: the same entry point, nothing else.
#include <string>
#include <vector>

#include "worker/worker_main.h"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args.front() == "__check-worker") args.erase(args.begin());
    return provision::check_worker_main(args);
}
