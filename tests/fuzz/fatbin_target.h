// Fuzz target: the native readers on hostile bytes.  The input is read both
// as a whole ELF file (sections, dynamic symbols, GNU hash lookups, its
// .nv_fatbin, a cubin's target) and as a bare fatbinary section.  Beyond "no crash, no
// sanitizer report, no hang": the counts of a summary must agree with each
// other, and the kernel decision must stay within them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "gpu/inventory.h"
#include "native/cubin.h"
#include "native/demangle.h"
#include "native/elf_file.h"
#include "native/fatbin.h"
#include "native/kernel_support.h"

namespace fuzz::fatbin {

namespace native = provision::native;

inline void check_summary(const native::FatbinSummary& s) {
    std::size_t entries = s.other_entries;
    for (const auto& [target, n] : s.entries_with) {
        entries += n;
        FUZZ_CHECK(n >= 1);
        FUZZ_CHECK(s.containers_with.count(target) == 1);
        FUZZ_CHECK(s.containers_with.at(target) <= n);
    }
    FUZZ_CHECK(entries == s.entries);
    std::size_t in_sets = 0;
    for (const auto& set : s.target_sets) in_sets += set.containers;
    FUZZ_CHECK(in_sets == s.containers);
    for (const auto& [target, n] : s.containers_with) {
        FUZZ_CHECK(n <= s.containers);
        FUZZ_CHECK(!target.str().empty());
    }
    for (const char* text : {"7.0", "8.0", "8.9", "9.0", "10.0", "12.0"}) {
        const auto decision = native::decide_kernel_support(s, *provision::ComputeCapability::parse(text));
        FUZZ_CHECK(decision.units_by_sass <= decision.units_runnable);
        FUZZ_CHECK(decision.units_runnable <= decision.units);
        FUZZ_CHECK(decision.units <= s.containers);
        if (decision.units == 0) FUZZ_CHECK(decision.runs == native::KernelSupport::no);
    }
}

inline void one_input(std::string_view input) {
    auto source = std::make_shared<native::MemorySource>(std::string(input), "fuzz.so");

    // As a bare section.
    if (auto summary = native::read_fatbin(*source, 0, source->size())) {
        check_summary(*summary);
        native::FatbinSummary twice = *summary;
        native::merge_into(twice, *summary);
        FUZZ_CHECK(twice.containers == 2 * summary->containers);
        check_summary(twice);
    } else {
        FUZZ_CHECK(!summary.error().message.empty());
    }

    // As an ELF file.
    auto file = native::ElfFile::parse(source);
    if (!file) {
        FUZZ_CHECK(!file.error().message.empty());
        return;
    }
    if (auto summary = native::read_fatbin(*file)) check_summary(*summary);
    if (native::is_cubin(*file)) {
        const auto cubin = native::cubin_target(*file);
        FUZZ_CHECK(cubin.target.has_value() != !cubin.problem.empty());
        if (cubin.target) {
            FUZZ_CHECK(cubin.target->arch >= 20 && cubin.target->arch <= 255);
            FUZZ_CHECK(cubin.target->kind == native::CodeKind::sass);
            check_summary(native::single_target_summary(*cubin.target));
        }
    }
    if (auto needed = file->undefined_dynamic_symbols()) {
        std::size_t looked_up = 0;
        for (const auto& symbol : *needed) {
            FUZZ_CHECK(!symbol.name.empty());
            (void)native::demangle(symbol.name);
            if (looked_up++ < 16) (void)file->exports_symbol(symbol.name);
        }
    }
    for (const char* name : {"_ZN3c104cuda9SetDeviceEi", "", "main"}) {
        auto first = file->exports_symbol(name);
        auto again = file->exports_symbol(name);  // the cached tables answer the same
        FUZZ_CHECK(first.ok() == again.ok());
        if (first.ok()) FUZZ_CHECK(*first == *again);
    }
    // All lookups of a file together stay within the step budget, and a
    // broken table answers later lookups without another step.
    FUZZ_CHECK(file->lookup_steps() <= native::ElfFile::kMaxLookupSteps + 1);
    if (auto broken = file->exports_symbol("_ZN2at6TensorC1Ev"); !broken && broken.error().kind ==
                                                                              native::ReadErrorKind::malformed) {
        const auto steps = file->lookup_steps();
        FUZZ_CHECK(!file->exports_symbol("_ZN5torch3fooEv").ok());
        FUZZ_CHECK(file->lookup_steps() == steps);
    }
    for (const auto& section : file->sections())
        FUZZ_CHECK(section.name.size() <= native::ElfFile::kMaxSectionNameBytes);
}

}  // namespace fuzz::fatbin
