/* What CUDA itself makes of CUDA_VISIBLE_DEVICES: cuInit's status and the
 * devices it then lists (count and UUIDs), printed as one tab-separated line.
 * Built and run by measure.sh on a machine with an NVIDIA GPU. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned);
typedef int (*count_fn)(int*);
typedef int (*get_fn)(int*, int);
typedef int (*uuid_fn)(unsigned char*, int);

int main(void) {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda) { printf("no-libcuda\n"); return 1; }
    init_fn cu_init = (init_fn)dlsym(cuda, "cuInit");
    count_fn cu_count = (count_fn)dlsym(cuda, "cuDeviceGetCount");
    get_fn cu_get = (get_fn)dlsym(cuda, "cuDeviceGet");
    uuid_fn cu_uuid = (uuid_fn)dlsym(cuda, "cuDeviceGetUuid_v2");
    if (!cu_uuid) cu_uuid = (uuid_fn)dlsym(cuda, "cuDeviceGetUuid");
    int status = cu_init(0);
    int count = 0;
    if (status == 0) cu_count(&count);
    printf("%d\t%d\t", status, count);
    for (int i = 0; i < count; ++i) {
        int device = 0;
        unsigned char u[16];
        if (cu_get(&device, i) != 0 || cu_uuid(u, device) != 0) { printf("?"); continue; }
        printf("%sGPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", i ? "," : "",
               u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    }
    printf("\n");
    return 0;
}
