// Standalone driver for the TF32 GEMM paths on one H100: correctness of the
// wgmma kernel (rounded and truncating operands) and the mma.sync kernel on
// fresh random inputs against fp64, then timings side by side with cuBLAS
// TF32.  Built without the project's libraries (the device machine has no
// toml++ or fmt); see NOTES-gemm-tf32.md for the command lines.
//
//   gemm_tf32_dev test    correctness table; exit 1 on any failure
//   gemm_tf32_dev bench   median times at 4096^3 and 8192^3
#include <cublas_v2.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../../kernels/gemm_tf32.cu"
#include "../../kernels/gemm_tf32_wgmma.cu"
#include "../../kernels/random_fill.cu"

using namespace provision::kernels::detail;


namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorName(status));
        std::exit(2);
    }
}

void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(status));
        std::exit(2);
    }
}

float round_tf32(float x) {
    if (!std::isfinite(x)) return x;
    return std::bit_cast<float>((std::bit_cast<uint32_t>(x) + 0x1000u) & 0xFFFFE000u);
}

enum class Path { wgmma_prepass, wgmma_consumer4, wgmma_consumer6, wgmma_producer4, wgmma_producer8, wgmma_truncate, mma_sync, cublas };
constexpr Path kAllPaths[] = {Path::cublas, Path::wgmma_prepass,          Path::wgmma_consumer4, Path::wgmma_consumer6, Path::wgmma_producer4,
                              Path::wgmma_producer8, Path::wgmma_truncate,  Path::mma_sync};
const char* name(Path p) {
    switch (p) {
        case Path::wgmma_prepass: return "rounding pass + wgmma";
        case Path::wgmma_consumer4: return "wgmma, consumers round (4)";
        case Path::wgmma_consumer6: return "wgmma, consumers round (6)";
        case Path::wgmma_producer4: return "wgmma, producer rounds (4)";
        case Path::wgmma_producer8: return "wgmma, producer rounds (8)";
        case Path::wgmma_truncate: return "wgmma (truncate)";
        case Path::mma_sync: return "mma.sync 128x256";
        case Path::cublas: return "cuBLAS TF32";
    }
    return "?";
}

cublasHandle_t cublas() {
    static cublasHandle_t handle = [] {
        cublasHandle_t h;
        check(cublasCreate(&h), "cublasCreate");
        return h;
    }();
    return handle;
}

cudaError_t run(Path p, const float* a, const float* b, float* c, int m, int n, int k, FaultKind fault,
                cudaStream_t stream = 0) {
    switch (p) {
        case Path::wgmma_prepass:
            return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::prepass, 4);
        case Path::wgmma_consumer4:
            return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::consumer, 4);
        case Path::wgmma_consumer6:
            return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::consumer, 6);
        case Path::wgmma_producer4:
            return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::producer, 4);
        case Path::wgmma_producer8:
            return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::producer, 8);
        case Path::wgmma_truncate:
            return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::none, 4);
        case Path::mma_sync:
            return launch_gemm_tf32(a, b, c, m, n, k, stream, fault, GemmTiling::block128x256_warps8);
        case Path::cublas: {
            // Row-major C[m,n] = A[m,k] B[n,k]^T is column-major C^T = B^T' A'.
            const float one = 1.f, zero = 0.f;
            check(cublasSetStream(cublas(), stream), "cublasSetStream");
            check(cublasGemmEx(cublas(), CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_32F, k, a, CUDA_R_32F, k,
                               &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
            return cudaGetLastError();
        }
    }
    return cudaErrorInvalidValue;
}

struct Buffers {
    float *a = nullptr, *b = nullptr, *c = nullptr;
    Buffers(int m, int n, int k) {
        check(cudaMalloc(&a, size_t(m) * k * 4), "cudaMalloc");
        check(cudaMalloc(&b, size_t(n) * k * 4), "cudaMalloc");
        check(cudaMalloc(&c, size_t(m) * n * 4), "cudaMalloc");
    }
    ~Buffers() {
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
};

struct Verdict {
    double error, tf32_error, tolerance;
    size_t unwritten;
    bool pass;
};

// max|c - exact| / max|exact| over all elements (small shapes) or `samples`
// random ones, against fp64 of the float inputs; the bound is the check's:
// 2 x the error of the rna-rounded inputs + 1e-5.
Verdict judge(const Buffers& buf, int m, int n, int k, int samples, uint64_t seed) {
    std::vector<float> a(size_t(m) * k), b(size_t(n) * k), c(size_t(m) * n);
    check(cudaMemcpy(a.data(), buf.a, a.size() * 4, cudaMemcpyDeviceToHost), "copy a");
    check(cudaMemcpy(b.data(), buf.b, b.size() * 4, cudaMemcpyDeviceToHost), "copy b");
    check(cudaMemcpy(c.data(), buf.c, c.size() * 4, cudaMemcpyDeviceToHost), "copy c");
    size_t unwritten = 0;
    for (float x : c) unwritten += std::bit_cast<uint32_t>(x) == 0xFFFFFFFFu;
    std::vector<std::pair<int, int>> where;
    if (samples == 0) {
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) where.push_back({i, j});
    } else {
        std::mt19937_64 pick(seed);
        where.push_back({0, 0});
        for (int s = 1; s < samples; ++s) where.push_back({int(pick() % m), int(pick() % n)});
    }
    double worst = 0, worst_t = 0, scale = 0;
    bool nan = false;
    for (auto [i, j] : where) {
        double exact = 0, rounded = 0;
        for (int x = 0; x < k; ++x) {
            const float av = a[size_t(i) * k + x], bv = b[size_t(j) * k + x];
            exact += double(av) * bv;
            rounded += double(round_tf32(av)) * round_tf32(bv);
        }
        const double got = c[size_t(i) * n + j];
        if (std::isnan(got)) nan = true;
        worst = std::max(worst, std::fabs(got - exact));
        worst_t = std::max(worst_t, std::fabs(float(rounded) - exact));
        scale = std::max(scale, std::fabs(exact));
    }
    Verdict v{worst / scale, worst_t / scale, 0, unwritten, false};
    v.tolerance = 2 * v.tf32_error + 1e-5;
    v.pass = !nan && unwritten == 0 && v.error <= v.tolerance;
    return v;
}

int test() {
    struct Shape {
        int m, n, k, samples;
    };
    const std::vector<Shape> shapes = {{256, 256, 512, 0}, {200, 136, 260, 0}, {129, 96, 1024, 0},
                                       {1, 1, 4, 0},       {384, 520, 36, 0},  {300, 1000, 1028, 0},
                                       {1031, 777, 2052, 4000}, {4096, 4096, 4096, 512}};
    int failures = 0;
    uint64_t seed = 0x5eed;
    std::printf("| path | shape | error | tf32 error | bound | unwritten | verdict |\n|---|---|---|---|---|---|---|\n");
    for (const Shape& s : shapes) {
        Buffers buf(s.m, s.n, s.k);
        for (Path p : kAllPaths) {
            ++seed;  // fresh inputs for every run
            check(launch_fill_normal_float(buf.a, size_t(s.m) * s.k, seed * 16, 0), "fill a");
            check(launch_fill_normal_float(buf.b, size_t(s.n) * s.k, seed * 16 + 1, 0), "fill b");
            check(cudaMemset(buf.c, 0xFF, size_t(s.m) * s.n * 4), "poison c");
            check(run(p, buf.a, buf.b, buf.c, s.m, s.n, s.k, FaultKind::none), name(p));
            check(cudaDeviceSynchronize(), name(p));
            const Verdict v = judge(buf, s.m, s.n, s.k, s.samples, seed);
            // Only the rounded wgmma and mma.sync paths are held to the bound.
            const bool held = p != Path::wgmma_truncate && p != Path::cublas;
            if (held && !v.pass) ++failures;
            std::printf("| %s | %dx%dx%d%s | %.3e | %.3e | %.3e | %zu | %s |\n", name(p), s.m, s.n, s.k,
                        s.samples ? " (sampled)" : "", v.error, v.tf32_error, v.tolerance, v.unwritten,
                        v.pass ? "pass" : (held ? "FAIL" : "over the bound (not held to it)"));
            std::fflush(stdout);
        }
    }
    // The planted wrong result must be caught.
    {
        Buffers buf(256, 256, 512);
        check(launch_fill_normal_float(buf.a, 256 * 512, 77, 0), "fill a");
        check(launch_fill_normal_float(buf.b, 256 * 512, 78, 0), "fill b");
        check(run(Path::wgmma_consumer4, buf.a, buf.b, buf.c, 256, 256, 512, FaultKind::wrong_result), "fault");
        check(cudaDeviceSynchronize(), "fault");
        const Verdict v = judge(buf, 256, 256, 512, 0, 1);
        std::printf("| wgmma, consumers round, planted wrong result | 256x256x512 | %.3e | | %.3e | | %s |\n", v.error,
                    v.tolerance, v.pass ? "FAIL (not caught)" : "caught");
        if (v.pass) ++failures;
    }
    // Same inputs twice: a race would show as different bits.
    {
        const int s = 2048;
        Buffers buf(s, s, s);
        check(launch_fill_normal_float(buf.a, size_t(s) * s, 91, 0), "fill a");
        check(launch_fill_normal_float(buf.b, size_t(s) * s, 92, 0), "fill b");
        std::vector<float> first(size_t(s) * s), second(size_t(s) * s);
        check(run(Path::wgmma_consumer4, buf.a, buf.b, buf.c, s, s, s, FaultKind::none), "repeat");
        check(cudaMemcpy(first.data(), buf.c, first.size() * 4, cudaMemcpyDeviceToHost), "copy");
        check(cudaMemset(buf.c, 0xFF, size_t(s) * s * 4), "poison");
        check(run(Path::wgmma_consumer4, buf.a, buf.b, buf.c, s, s, s, FaultKind::none), "repeat");
        check(cudaMemcpy(second.data(), buf.c, second.size() * 4, cudaMemcpyDeviceToHost), "copy");
        const bool same = std::memcmp(first.data(), second.data(), first.size() * 4) == 0;
        std::printf("| wgmma, consumers round, same inputs twice | 2048^3 | | | | | %s |\n", same ? "bitwise equal" : "DIFFER");
        if (!same) ++failures;
    }
    std::printf("test: %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}

int bench(int runs) {
    std::printf("| size | path | median ms | min ms | TFLOP/s | x cuBLAS |\n|---|---|---|---|---|---|\n");
    for (int size : {4096, 8192}) {
        // Two input sets of at least 3 x 64 MiB: more than the 50 MB L2.
        constexpr int kSets = 2;
        std::vector<Buffers*> sets;
        for (int i = 0; i < kSets; ++i) {
            sets.push_back(new Buffers(size, size, size));
            check(launch_fill_normal_float(sets[i]->a, size_t(size) * size, 500 + 2 * i, 0), "fill");
            check(launch_fill_normal_float(sets[i]->b, size_t(size) * size, 501 + 2 * i, 0), "fill");
        }
        cudaEvent_t start, stop;
        check(cudaEventCreate(&start), "event");
        check(cudaEventCreate(&stop), "event");
        double cublas_ms = 0;
        for (Path p : kAllPaths) {
            for (int i = 0; i < 3; ++i)
                check(run(p, sets[i % kSets]->a, sets[i % kSets]->b, sets[i % kSets]->c, size, size, size,
                          FaultKind::none),
                      "warm-up");
            std::vector<double> times;
            for (int i = 0; i < runs; ++i) {
                Buffers& s = *sets[i % kSets];
                check(cudaEventRecord(start), "record");
                check(run(p, s.a, s.b, s.c, size, size, size, FaultKind::none), name(p));
                check(cudaEventRecord(stop), "record");
                check(cudaEventSynchronize(stop), "sync");
                float ms = 0;
                check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
                times.push_back(ms);
            }
            std::sort(times.begin(), times.end());
            const double median = times[times.size() / 2];
            if (p == Path::cublas) cublas_ms = median;
            const double tflops = 2.0 * size * double(size) * size / (median * 1e-3) / 1e12;
            std::printf("| %d^3 | %s | %.3f | %.3f | %.1f | %.2f |\n", size, name(p), median, times.front(), tflops,
                        cublas_ms / median);
            std::fflush(stdout);
        }
        for (Buffers* b : sets) delete b;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "test";
    if (mode == "test") return test();
    if (mode == "bench") return bench(argc > 2 ? std::atoi(argv[2]) : 20);
    std::fprintf(stderr, "usage: gemm_tf32_dev test|bench [runs]\n");
    return 2;
}
