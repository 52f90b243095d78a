// Reads the target architectures of a library's fatbinary (src/native) and
// times it, to compare with `cuobjdump --list-elf` / `--list-ptx`:
//
//   native_scan [--cold] [--runs N] [--exports SYMBOL]... [--needs] [--resolve-in LIB]... LIBRARY.so
//
// Prints the entries and containers (translation units) per target, the
// decision for common GPUs, and the time of one scan (open, section
// headers, every container and entry header).  --cold evicts the file from
// the page cache (posix_fadvise DONTNEED) before each run, so the time
// includes reading the headers from the disk.  --exports looks SYMBOL up
// through the GNU hash table; --needs lists the undefined dynamic symbols;
// --resolve-in looks each undefined torch symbol (c10, at, torch) up in the
// LIBs and counts the ones none of them exports.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "native/demangle.h"
#include "native/elf_file.h"
#include "native/fatbin.h"
#include "native/kernel_support.h"

namespace native = provision::native;

namespace {

void evict_from_page_cache(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    bool cold = false;
    int runs = 20;
    bool needs = false;
    std::vector<std::string> exports;
    std::vector<std::string> resolve_in;
    std::string path;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--cold") cold = true;
        else if (arg == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (arg == "--exports" && i + 1 < argc) exports.push_back(argv[++i]);
        else if (arg == "--needs") needs = true;
        else if (arg == "--resolve-in" && i + 1 < argc) resolve_in.push_back(argv[++i]);
        else if (!arg.empty() && arg[0] != '-' && path.empty()) path = arg;
        else {
            std::fprintf(stderr, "usage: native_scan [--cold] [--runs N] [--exports SYMBOL]... [--needs] [--resolve-in LIB]... LIBRARY.so\n");
            return 2;
        }
    }
    if (path.empty()) {
        std::fprintf(stderr, "usage: native_scan [--cold] [--runs N] [--exports SYMBOL]... [--needs] [--resolve-in LIB]... LIBRARY.so\n");
        return 2;
    }

    if (!resolve_in.empty()) {
        const auto start = std::chrono::steady_clock::now();
        auto file = native::ElfFile::open(path);
        if (!file) return fmt::print(stderr, "native_scan: {}\n", file.error().message), 1;
        auto needed = file->undefined_dynamic_symbols();
        if (!needed) return fmt::print(stderr, "native_scan: {}\n", needed.error().message), 1;
        std::vector<native::ElfFile> libraries;
        for (const std::string& lib : resolve_in) {
            auto opened = native::ElfFile::open(lib);
            if (!opened) return fmt::print(stderr, "native_scan: {}\n", opened.error().message), 1;
            libraries.push_back(std::move(*opened));
        }
        std::size_t torch_symbols = 0, missing = 0;
        for (const auto& symbol : *needed) {
            if (!symbol.name.starts_with("_ZN3c10") && !symbol.name.starts_with("_ZN2at") &&
                !symbol.name.starts_with("_ZN5torch"))
                continue;
            ++torch_symbols;
            bool found = false;
            for (const auto& library : libraries) {
                auto answer = library.exports_symbol(symbol.name);
                if (!answer) return fmt::print(stderr, "native_scan: {}\n", answer.error().message), 1;
                if (*answer) { found = true; break; }
            }
            if (!found && !symbol.weak) {
                ++missing;
                if (missing <= 10) fmt::print("missing: {}\n", native::demangle(symbol.name));
            }
        }
        fmt::print("{} undefined symbols, {} in torch's namespaces, {} exported by none of {} libraries; {:.3f} ms\n",
                   needed->size(), torch_symbols, missing, libraries.size(),
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        return missing == 0 ? 0 : 3;
    }
    if (!exports.empty() || needs) {
        const auto start = std::chrono::steady_clock::now();
        auto file = native::ElfFile::open(path);
        if (!file) {
            fmt::print(stderr, "native_scan: {}\n", file.error().message);
            return 1;
        }
        for (const std::string& symbol : exports) {
            const auto lookup = std::chrono::steady_clock::now();
            auto answer = file->exports_symbol(symbol);
            const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - lookup).count();
            fmt::print("exports {} ({}): {} [{:.1f} us]\n", symbol, native::demangle(symbol),
                       answer ? (*answer ? "yes" : "no") : answer.error().message, us);
        }
        if (needs) {
            auto needed = file->undefined_dynamic_symbols();
            if (!needed) {
                fmt::print(stderr, "native_scan: {}\n", needed.error().message);
                return 1;
            }
            fmt::print("needs {} undefined dynamic symbols\n", needed->size());
            for (const auto& symbol : *needed) fmt::print("  {}{}\n", native::demangle(symbol.name), symbol.weak ? " (weak)" : "");
        }
        fmt::print("symbols: {:.3f} ms\n",
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        return 0;
    }

    std::vector<double> times_ms;
    std::optional<native::FatbinSummary> summary;
    std::uint64_t section_size = 0;
    for (int run = 0; run < runs; ++run) {
        if (cold) evict_from_page_cache(path);
        const auto start = std::chrono::steady_clock::now();
        auto file = native::ElfFile::open(path);
        if (!file) {
            fmt::print(stderr, "native_scan: {}\n", file.error().message);
            return 1;
        }
        auto read = native::read_fatbin(*file);
        const auto stop = std::chrono::steady_clock::now();
        if (!read) {
            fmt::print(stderr, "native_scan: {}\n", read.error().message);
            return 1;
        }
        if (const auto* section = file->section(".nv_fatbin")) section_size = section->size;
        times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
        summary = std::move(read.value());
    }

    fmt::print("file: {}\n.nv_fatbin: {} bytes, {} containers, {} entries ({} of other kinds), {} bytes skipped\n",
               path, section_size, summary->containers, summary->entries, summary->other_entries,
               summary->skipped_bytes);
    fmt::print("{:<14} {:>8} {:>11}\n", "target", "entries", "containers");
    for (const auto& [target, entries] : summary->entries_with)
        fmt::print("{:<14} {:>8} {:>11}\n", target.str(), entries, summary->containers_with.at(target));
    fmt::print("target sets (containers: targets):\n");
    for (const auto& set : summary->target_sets) {
        std::string names;
        for (const auto& t : set.targets) names += (names.empty() ? "" : " ") + t.str();
        fmt::print("  {:>6}: {}\n", set.containers, names.empty() ? "(none)" : names);
    }
    fmt::print("decision per GPU (units by SASS / runnable / with code):\n");
    for (const char* cc : {"7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"}) {
        const auto gpu = *provision::ComputeCapability::parse(cc);
        const auto d = native::decide_kernel_support(*summary, gpu);
        fmt::print("  {:>5}: {:<8} {}/{}/{}\n", cc, native::to_string(d.runs), d.units_by_sass, d.units_runnable,
                   d.units);
    }
    std::vector<double> sorted = times_ms;
    std::sort(sorted.begin(), sorted.end());
    fmt::print("time per scan ({}, {} runs): min {:.3f} ms, median {:.3f} ms, max {:.3f} ms\n",
               cold ? "page cache dropped before each" : "warm page cache after the first", runs, sorted.front(),
               sorted[sorted.size() / 2], sorted.back());
    if (!cold) fmt::print("first run: {:.3f} ms\n", times_ms.front());
    return 0;
}
