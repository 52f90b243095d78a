// A stand-in for torch's libc10.so: exports a few of its symbols.
namespace c10::cuda {
void SetDevice(int) {}
int device_count() { return 1; }
}  // namespace c10::cuda

namespace c10 {
// Not exported: hidden symbols never reach the dynamic symbol table.
__attribute__((visibility("hidden"))) void hidden_helper() {}
__attribute__((weak)) void weak_hook() {}
}  // namespace c10

extern "C" int c10_plain_c_function() { return 7; }
