// A program check-linkage must refuse (tests/onefile/CMakeLists.txt): built
// with the shared C++ runtime, or calling a function of a newer glibc.
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char**) {
    std::string text = "probe";
#ifdef PROBE_ARC4RANDOM
    text += std::to_string(arc4random() % 2);
#endif
    std::printf("%s %d\n", text.c_str(), argc);
    return 0;
}
