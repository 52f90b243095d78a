// Linked into the provision executable only, with the static C++ runtime
// (CMakeLists.txt): keeps the binary's glibc requirement at 2.34
// (RHEL/Rocky 9), though it is built on Debian 12 (glibc 2.36).  Two symbols
// of the static runtime would raise it, and are defined here instead:
//
// - _dl_find_object (GLIBC_2.35): libgcc's unwinder finds the unwind tables
//   for exceptions with it.  Here it calls glibc's own where the running
//   glibc has it, and otherwise answers the same question from
//   dl_iterate_phdr, as libgcc did before glibc 2.35.
// - arc4random (GLIBC_2.36): libstdc++'s std::random_device can use it, and
//   its object file is linked whether or not random_device is.  Here it reads
//   the kernel's random source with getrandom (GLIBC_2.25), as glibc does.
#include <dlfcn.h>
#include <link.h>
#include <sys/random.h>

#include <cerrno>

#include <cstdint>
#include <cstdlib>

#include "kernels/fault_injection.h"

static_assert(!DLFO_STRUCT_HAS_EH_DBASE, "this architecture's unwinder needs dlfo_eh_dbase, which is not filled here");

namespace {

using FindObject = int (*)(void*, struct dl_find_object*);

struct Search {
    std::uintptr_t address;
    struct dl_find_object* result;
};

// The loaded object whose PT_LOAD segments hold the address, and its
// PT_GNU_EH_FRAME segment (the .eh_frame_hdr the unwinder reads).
int find_in(struct dl_phdr_info* info, std::size_t, void* data) {
    auto* search = static_cast<Search*>(data);
    std::uintptr_t start = UINTPTR_MAX, end = 0;
    bool holds = false;
    void* eh_frame = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[i];
        const std::uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
        if (segment.p_type == PT_LOAD) {
            if (search->address >= begin && search->address < begin + segment.p_memsz) holds = true;
            if (begin < start) start = begin;
            if (begin + segment.p_memsz > end) end = begin + segment.p_memsz;
        } else if (segment.p_type == PT_GNU_EH_FRAME) {
            eh_frame = reinterpret_cast<void*>(begin);
        }
    }
    if (!holds) return 0;
    *search->result = {};
    search->result->dlfo_map_start = reinterpret_cast<void*>(start);
    search->result->dlfo_map_end = reinterpret_cast<void*>(end);
    search->result->dlfo_eh_frame = eh_frame;
    return 1;
}

int find_by_walking(void* address, struct dl_find_object* result) {
    Search search{reinterpret_cast<std::uintptr_t>(address), result};
    return dl_iterate_phdr(find_in, &search) == 1 ? 0 : -1;
}

FindObject glibc_find_object() {
    // Test builds: PROVISION_TEST_UNWIND_FALLBACK=1 takes the walk even where
    // glibc has its own (tests/e2e/onefile_test.cpp throws through it).  Read
    // here, before the settings are: the first exception may come sooner.
    if constexpr (provision::kFaultInjection) {
        const char* forced = std::getenv("PROVISION_TEST_UNWIND_FALLBACK");
        if (forced && *forced == '1') return nullptr;
    }
    return reinterpret_cast<FindObject>(dlvsym(RTLD_DEFAULT, "_dl_find_object", "GLIBC_2.35"));
}

}  // namespace

extern "C" int _dl_find_object(void* address, struct dl_find_object* result) noexcept {
    static const FindObject glibc = glibc_find_object();
    return glibc ? glibc(address, result) : find_by_walking(address, result);
}

extern "C" std::uint32_t arc4random() noexcept {
    std::uint32_t value = 0;
    auto* bytes = reinterpret_cast<unsigned char*>(&value);
    std::size_t have = 0;
    while (have < sizeof value) {
        const ssize_t n = getrandom(bytes + have, sizeof value - have, 0);
        if (n > 0) have += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EINTR) std::abort();  // glibc's arc4random, too, cannot fail softly
    }
    return value;
}
