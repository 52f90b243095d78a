// A tuning aid for the TF32 GEMM paths on an sm_90 GPU: the wgmma kernel
// with each way of rounding its operands (kernels/gemm_tf32_wgmma.cu), the
// mma.sync kernel, and cuBLAS TF32 beside them; docs/KERNELS.md has what it
// found.
//
//   gemm_tf32_tuning test          every path on fresh N(0,1) inputs against
//                                  fp64 dot products, the gemm.tf32 check's
//                                  rule (error <= 2 x the error of the
//                                  rna-rounded inputs + 1e-5); the planted
//                                  wrong result; the same inputs twice must
//                                  give the same bits.  Exit 1 on a failure.
//   gemm_tf32_tuning bench [RUNS]  median time of every path at 4096^3 and
//                                  8192^3, two input sets alternating
#include <cublas_v2.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_support.h"
#include "driver_support.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"

using namespace provision::kernels;
using namespace provision::kernels::detail;

namespace {

void check_cublas(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, int(status)));
}

enum class Path { cublas, prepass, consumer4, consumer6, producer4, producer8, truncate, mma_sync };
constexpr Path kPaths[] = {Path::cublas,    Path::prepass,   Path::consumer4, Path::consumer6,
                           Path::producer4, Path::producer8, Path::truncate,  Path::mma_sync};

const char* name(Path p) {
    switch (p) {
        case Path::cublas: return "cuBLAS TF32";
        case Path::prepass: return "rounding pass + wgmma";
        case Path::consumer4: return "wgmma, consumers round (4)";
        case Path::consumer6: return "wgmma, consumers round (6)";
        case Path::producer4: return "wgmma, producer rounds (4)";
        case Path::producer8: return "wgmma, producer rounds (8)";
        case Path::truncate: return "wgmma (truncates)";
        case Path::mma_sync: return "mma.sync 128x256";
    }
    return "?";
}

// Only the paths the check could take are held to its bound.
bool held_to_bound(Path p) { return p != Path::truncate && p != Path::cublas; }

class Cublas {
public:
    Cublas() { check_cublas(cublasCreate(&handle_), "cublasCreate"); }
    ~Cublas() { cublasDestroy(handle_); }
    Cublas(const Cublas&) = delete;
    Cublas& operator=(const Cublas&) = delete;
    cublasHandle_t get() const { return handle_; }

private:
    cublasHandle_t handle_ = nullptr;
};

cudaError_t run(Path p, const Cublas& cublas, const float* a, const float* b, float* c, int m, int n, int k,
                cudaStream_t stream, FaultKind fault = FaultKind::none) {
    switch (p) {
        case Path::prepass: return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::prepass, 4);
        case Path::consumer4: return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::consumer, 4);
        case Path::consumer6: return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::consumer, 6);
        case Path::producer4: return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::producer, 4);
        case Path::producer8: return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::producer, 8);
        case Path::truncate: return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault, GemmRounding::none, 4);
        case Path::mma_sync: return launch_gemm_tf32(a, b, c, m, n, k, stream, fault, GemmTiling::block128x256_warps8);
        case Path::cublas: {
            // Row-major C [m, n] = A [m, k] B [n, k]ᵀ is column-major Cᵀ = B Aᵀ.
            const float one = 1.f, zero = 0.f;
            check_cublas(cublasSetStream(cublas.get(), stream), "cublasSetStream");
            check_cublas(cublasGemmEx(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_32F, k, a,
                                      CUDA_R_32F, k, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32,
                                      CUBLAS_GEMM_DEFAULT),
                         "cublasGemmEx");
            return cudaGetLastError();
        }
    }
    return cudaErrorInvalidValue;
}

struct Operands {
    Operands(int m, int n, int k)
        : m(m), n(n), k(k), a(std::size_t(m) * k * 4), b(std::size_t(n) * k * 4), c(std::size_t(m) * n * 4) {}
    void fill(std::uint64_t seed, const Stream& stream) {
        check_cuda(launch_fill_normal_float(a.as<float>(), std::size_t(m) * k, seed * 16, stream.get()), "fill a");
        check_cuda(launch_fill_normal_float(b.as<float>(), std::size_t(n) * k, seed * 16 + 1, stream.get()), "fill b");
    }
    int m, n, k;
    DeviceBuffer a, b, c;
};

struct Verdict {
    double error = 0, tf32_error = 0, bound = 0;
    std::size_t unwritten = 0;
    bool pass = false;
};

// max |c - exact| / max |exact| over every element (samples = 0) or over
// `samples` random ones and element (0, 0), against fp64 of the float inputs.
Verdict judge(const Operands& x, int samples, std::uint64_t seed, const Stream& stream) {
    const auto a = x.a.download<float>(stream.get());
    const auto b = x.b.download<float>(stream.get());
    const auto c = x.c.download<std::uint32_t>(stream.get());
    Verdict v;
    v.unwritten = std::count(c.begin(), c.end(), 0xFFFFFFFFu);
    std::vector<std::pair<int, int>> where;
    if (samples == 0) {
        for (int i = 0; i < x.m; ++i)
            for (int j = 0; j < x.n; ++j) where.emplace_back(i, j);
    } else {
        std::mt19937_64 pick(seed);
        where.emplace_back(0, 0);
        for (int s = 1; s < samples; ++s) where.emplace_back(int(pick() % x.m), int(pick() % x.n));
    }
    double worst = 0, worst_tf32 = 0, scale = 0;
    bool nan = false;
    for (auto [i, j] : where) {
        double exact = 0, rounded = 0;
        for (int q = 0; q < x.k; ++q) {
            const float av = a[std::size_t(i) * x.k + q], bv = b[std::size_t(j) * x.k + q];
            exact += double(av) * bv;
            rounded += double(round_to_tf32(av)) * round_to_tf32(bv);
        }
        float got;
        std::memcpy(&got, &c[std::size_t(i) * x.n + j], sizeof got);
        nan = nan || std::isnan(got);
        worst = std::max(worst, std::fabs(got - exact));
        worst_tf32 = std::max(worst_tf32, std::fabs(float(rounded) - exact));
        scale = std::max(scale, std::fabs(exact));
    }
    v.error = worst / scale;
    v.tf32_error = worst_tf32 / scale;
    v.bound = 2 * v.tf32_error + 1e-5;
    v.pass = !nan && v.unwritten == 0 && v.error <= v.bound;
    return v;
}

int test(const Stream& stream, const Cublas& cublas) {
    struct Shape {
        int m, n, k, samples;
    };
    const Shape shapes[] = {{256, 256, 512, 0}, {200, 136, 260, 0}, {129, 96, 1024, 0},    {1, 1, 4, 0},
                            {384, 520, 36, 0},  {300, 1000, 1028, 0}, {1031, 777, 2052, 4000}, {4096, 4096, 4096, 512}};
    int failures = 0;
    std::uint64_t seed = 0x5eed;
    fmt::print("| path | shape | error | tf32 error | bound | unwritten | verdict |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (const Shape& s : shapes) {
        Operands x(s.m, s.n, s.k);
        for (Path p : kPaths) {
            x.fill(++seed, stream);  // fresh inputs for every run
            x.c.poison(stream.get());
            check_cuda(run(p, cublas, x.a.as<float>(), x.b.as<float>(), x.c.as<float>(), s.m, s.n, s.k, stream.get()),
                       name(p));
            const Verdict v = judge(x, s.samples, seed, stream);
            if (held_to_bound(p) && !v.pass) ++failures;
            fmt::print("| {} | {}x{}x{}{} | {:.3e} | {:.3e} | {:.3e} | {} | {} |\n", name(p), s.m, s.n, s.k,
                       s.samples ? " (sampled)" : "", v.error, v.tf32_error, v.bound, v.unwritten,
                       v.pass ? "pass" : held_to_bound(p) ? "FAIL" : "over the bound (not held to it)");
            std::fflush(stdout);
        }
    }
    {  // the planted wrong result must be caught
        Operands x(256, 256, 512);
        x.fill(77, stream);
        check_cuda(run(Path::consumer4, cublas, x.a.as<float>(), x.b.as<float>(), x.c.as<float>(), 256, 256, 512,
                       stream.get(), FaultKind::wrong_result),
                   "planted wrong result");
        const Verdict v = judge(x, 0, 1, stream);
        fmt::print("| wgmma, consumers round, planted wrong result | 256x256x512 | {:.3e} | | {:.3e} | | {} |\n", v.error,
                   v.bound, v.pass ? "FAIL (not caught)" : "caught");
        failures += v.pass;
    }
    {  // the same inputs twice: a race would show as different bits
        constexpr int kSize = 2048;
        Operands x(kSize, kSize, kSize);
        x.fill(91, stream);
        auto product = [&] {
            x.c.poison(stream.get());
            check_cuda(run(Path::consumer4, cublas, x.a.as<float>(), x.b.as<float>(), x.c.as<float>(), kSize, kSize,
                           kSize, stream.get()),
                       "repeat");
            return x.c.download<std::uint32_t>(stream.get());
        };
        const bool same = product() == product();
        fmt::print("| wgmma, consumers round, same inputs twice | 2048^3 | | | | | {} |\n", same ? "bitwise equal" : "DIFFER");
        failures += !same;
    }
    fmt::print("test: {} failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}

int bench(int runs, const Stream& stream, const Cublas& cublas) {
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
    fmt::print("{}: median of {} after 3 warm-ups\n\n", properties.name, runs);
    fmt::print("| size | path | median ms | min ms | TFLOP/s | x cuBLAS |\n| --- | --- | --- | --- | --- | --- |\n");
    for (int size : {4096, 8192}) {
        // Two input sets of 3 x 64 MiB or more: over the L2.
        std::unique_ptr<Operands> sets[2] = {std::make_unique<Operands>(size, size, size),
                                             std::make_unique<Operands>(size, size, size)};
        sets[0]->fill(500, stream);
        sets[1]->fill(501, stream);
        double cublas_ms = 0;
        for (Path p : kPaths) {
            auto launch = [&](int i) {
                Operands& x = *sets[i % 2];
                check_cuda(run(p, cublas, x.a.as<float>(), x.b.as<float>(), x.c.as<float>(), size, size, size,
                               stream.get()),
                           name(p));
            };
            const std::vector<double> times = provision::bench::time_launches(stream, 3, runs, launch);
            const double median = times[times.size() / 2];
            if (p == Path::cublas) cublas_ms = median;
            fmt::print("| {}^3 | {} | {:.3f} | {:.3f} | {:.1f} | {:.2f} |\n", size, name(p), median, times.front(),
                       2.0 * size * double(size) * size / (median * 1e-3) / 1e12, cublas_ms / median);
            std::fflush(stdout);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return provision::bench::driver_main(
        argc, argv, "test | bench [RUNS]", [](const Stream& stream) { return test(stream, Cublas()); },
        [](const Stream& stream, const std::vector<std::string>& args) {
            return bench(args.empty() ? 20 : std::max(1, std::atoi(args[0].c_str())), stream, Cublas());
        });
}
