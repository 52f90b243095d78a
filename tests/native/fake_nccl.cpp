// A stand-in for libnccl.so.2: nothing but the build string NCCL's init.cc
// puts in .rodata, beside the decoy its RAS client carries.  `extern`: a
// namespace-scope const has internal linkage in C++, and the symbols must
// be exported.
extern "C" {
extern __attribute__((used, visibility("default"))) const char nccl_ras_banner[] = "NCCL version 2.28.9 compiled with CUDA 13.0";
extern __attribute__((used, visibility("default"))) const char nccl_version_string[] = "NCCL version " NCCL_FAKE_VERSION;
}
