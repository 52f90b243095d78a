// The GPU's tally of an attention output (launch_attention_tally) against
// the host's (kernels/attention_judge.h), which the attention check uses
// for its small shapes: the same counts and the same maxima, exactly, on
// fresh random outputs and references, for both element types, lengths that
// fill no warp or block evenly, and never-written, NaN and infinite
// elements planted; and the verdict they give.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "attention_judge.h"
#include "cuda_support.h"
#include "cuda_test_support.h"
#include "kernel_launchers.h"

using namespace provision;
using namespace provision::kernels;
using namespace provision::kernels::detail;

namespace {

struct Elements {
    std::vector<std::uint16_t> output;
    std::vector<float> reference32, reference_low;
};

// Outputs near the fp32 reference, the input-precision reference further
// off; `planted`: a never-written element, NaN and infinite outputs, and a
// NaN in the input-precision reference.
Elements draw(ElementType type, std::size_t count, bool planted, std::mt19937_64& random) {
    std::normal_distribution<float> normal;
    Elements e;
    for (std::size_t i = 0; i < count; ++i) {
        e.output.push_back(float_to_bits(type, normal(random)));
        e.reference32.push_back(bits_to_float(type, e.output.back()) + 1e-3f * normal(random));
        // 1e-2 off either way: ten times the outputs' spread and more than
        // any of them, so that a clean output always passes.
        e.reference_low.push_back(e.reference32.back() + (i % 2 ? 1e-2f : -1e-2f));
    }
    if (planted) {
        // Three distinct outputs, so that no plant overwrites another.
        std::uniform_int_distribution<std::size_t> at(0, count - 1);
        std::vector<std::size_t> picked;
        while (picked.size() < 3)
            if (const std::size_t i = at(random); std::find(picked.begin(), picked.end(), i) == picked.end())
                picked.push_back(i);
        e.output[picked[0]] = kPoison16;
        e.output[picked[1]] = float_to_bits(type, std::numeric_limits<float>::quiet_NaN());
        e.output[picked[2]] = float_to_bits(type, std::numeric_limits<float>::infinity());
        e.reference_low[at(random)] = std::numeric_limits<float>::quiet_NaN();
    }
    return e;
}

Tally tally_on_gpu(ElementType type, const Elements& e, const Stream& stream) {
    const std::size_t count = e.output.size();
    DeviceBuffer output(count * 2), reference32(count * 4), reference_low(count * 4), counted(sizeof(AttentionTally));
    output.upload(e.output, stream.get());
    reference32.upload(e.reference32, stream.get());
    reference_low.upload(e.reference_low, stream.get());
    check_cuda(cudaMemsetAsync(counted.get(), 0, counted.bytes(), stream.get()), "cudaMemsetAsync");
    check_cuda(launch_attention_tally(type, output.as<const std::uint16_t>(), reference32.as<const float>(),
                                      reference_low.as<const float>(), count, counted.as<AttentionTally>(),
                                      stream.get()),
               "attention tally");
    stream.synchronize("attention tally");
    return tally_of(counted.download<AttentionTally>(stream.get()).front());
}

void check_extent(const ErrorExtent& gpu, const ErrorExtent& host) {
    CHECK(gpu.worst == host.worst);
    CHECK(gpu.scale == host.scale);
    CHECK(gpu.nan == host.nan);
}

}  // namespace

TEST_CASE("the GPU tallies an attention output exactly as the host does", "[gpu]") {
    const auto device = gpu_tests::current_device_or_skip();
    if (!device) return;
    const auto seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937_64 random(seed);
    const Stream stream;
    const AttentionProblem problem{1, 1, 1, 1, false, 1.f};  // for the verdict's words only
    for (const ElementType type : {ElementType::fp16, ElementType::bf16})
        for (const std::size_t count : {std::size_t{1}, std::size_t{31}, std::size_t{4097}, std::size_t{300001}})
            for (const bool planted : {false, true}) {
                if (planted && count < 4) continue;
                CAPTURE(element_type_name(type), count, planted);
                const Elements e = draw(type, count, planted, random);
                const Tally gpu = tally_on_gpu(type, e, stream);
                const Tally host = tally({problem, e.output, e.reference32, e.reference_low, {}}, type, 0, count);
                CHECK(gpu.unwritten == host.unwritten);
                CHECK(gpu.nan == host.nan);
                check_extent(gpu.kernel, host.kernel);
                check_extent(gpu.input_precision, host.input_precision);
                CHECK(host.unwritten == (planted ? 1u : 0u));
                const Verdict verdict = verdict_of(problem, count, false, gpu);
                CHECK(verdict.problem.empty() == !planted);
            }
}
