// A stand-in for a compiled extension (flash_attn_2_cuda....so): needs torch
// symbols it leaves to the dynamic loader.  Built twice: as it matches the
// fake libc10.so, and with MISSING_SYMBOL defined, needing one more symbol
// that libc10.so does not export.
namespace c10::cuda {
void SetDevice(int);
#ifdef MISSING_SYMBOL
void ExchangeDevice(int);
#endif
}  // namespace c10::cuda

__attribute__((weak)) void optional_hook();

extern "C" void extension_entry() {
    c10::cuda::SetDevice(0);
#ifdef MISSING_SYMBOL
    c10::cuda::ExchangeDevice(1);
#endif
    if (optional_hook) optional_hook();
}
