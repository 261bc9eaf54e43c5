/* A stand-in for the CUDA driver (libcuda.so) for tests/it/cli/launch.rs: every
 * entry point kdslc looks up, each answering as a driver with one GPU that
 * runs nothing would, except for the results chosen through the
 * environment:
 *
 *   KDSL_STUB_INIT=N   cuInit returns N
 *   KDSL_STUB_LOAD=N   cuModuleLoadDataEx returns N (and writes a JIT log)
 *   KDSL_STUB_ENCODE=N cuTensorMapEncodeTiled returns N
 *   KDSL_STUB_LOG=FILE each cuTensorMapEncodeTiled appends its arguments to
 *                      FILE, and cuLaunchKernelEx, given KDSL_STUB_PARAMS=N,
 *                      the first 8 bytes of each of its N parameters and
 *                      whether each pointer is 64-byte aligned, and,
 *                      given KDSL_STUB_DEREF=I, the 8 bytes at the address
 *                      parameter I holds
 *
 * A tensor map the stub encodes holds "STUBTMAP", then the global address.
 * Given KDSL_STUB_CONFIG=1 too, cuLaunchKernelEx also logs its grid, block,
 * dynamic shared memory and attribute count. The device has compute
 * capability 9.0. The entry points a program built from a header of
 * `kdslc --emit header` calls besides (tests/it/host/) are here too.
 *
 * cuGetErrorString knows the codes 1, 36 and 218, answers 1 (invalid value)
 * for the others, and 424243 for 424242 (a result of its own that no
 * header names). Built at test time: cc -shared -fPIC. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int CUresult;

static CUresult chosen(const char *name) {
    const char *v = getenv(name);
    return v ? (CUresult)strtoul(v, 0, 10) : 0;
}

static char context, event, function, module;

CUresult cuInit(unsigned int flags) { (void)flags; return chosen("KDSL_STUB_INIT"); }
CUresult cuDeviceGetCount(int *count) { *count = 1; return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
CUresult cuDeviceGetName(char *name, int len, int device) {
    (void)device;
    strncpy(name, "Stub GPU", (size_t)len);
    return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) { (void)device; *ctx = &context; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int device) { (void)device; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned int n, int *options, void **values) {
    (void)image;
    CUresult r = chosen("KDSL_STUB_LOAD");
    if (r != 0) {
        for (unsigned int i = 0; i < n; i++) {
            if (options[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */) {
                strcpy((char *)values[i], "stub: the JIT refused this module");
            }
        }
        return r;
    }
    *mod = &module;
    return 0;
}
CUresult cuModuleGetFunction(void **f, void *mod, const char *name) {
    (void)mod; (void)name; *f = &function; return 0;
}
CUresult cuModuleUnload(void *mod) { (void)mod; return 0; }
CUresult cuModuleLoadData(void **mod, const void *image) {
    return cuModuleLoadDataEx(mod, image, 0, 0, 0);
}
CUresult cuModuleLoad(void **mod, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 301; /* CUDA_ERROR_FILE_NOT_FOUND */
    fclose(f);
    return cuModuleLoadDataEx(mod, path, 0, 0, 0);
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
    (void)device;
    *value = attribute == 75 ? 9 : 0; /* ..._COMPUTE_CAPABILITY_MAJOR, _MINOR (76) */
    return 0;
}
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuMemsetD8_v2(uint64_t dst, unsigned char value, size_t n) {
    memset((void *)(uintptr_t)dst, value, n); return 0;
}
CUresult cuGetErrorName(CUresult code, const char **text) {
    *text = code == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_STUB";
    return 0;
}

CUresult cuMemAlloc_v2(uint64_t *ptr, size_t size) {
    void *p = calloc(1, size);
    if (!p) return 2;
    *ptr = (uint64_t)(uintptr_t)p;
    return 0;
}
CUresult cuMemFree_v2(uint64_t ptr) { free((void *)(uintptr_t)ptr); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) {
    memcpy((void *)(uintptr_t)dst, src, n); return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) {
    memcpy(dst, (const void *)(uintptr_t)src, n); return 0;
}

CUresult cuFuncSetAttribute(void *f, int attr, int value) { (void)f; (void)attr; (void)value; return 0; }

static FILE *stub_log(void) {
    const char *path = getenv("KDSL_STUB_LOG");
    return path ? fopen(path, "a") : 0;
}

CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra) {
    (void)config; (void)f; (void)extra;
    FILE *log = stub_log();
    const char *n = getenv("KDSL_STUB_PARAMS");
    if (log && getenv("KDSL_STUB_CONFIG")) {
        const unsigned int *c = (const unsigned int *)config; /* CUlaunchConfig's first fields */
        unsigned int attrs = *(const unsigned int *)((const char *)config + 48); /* numAttrs */
        fprintf(log, "launch grid=%u,%u,%u block=%u,%u,%u shared=%u attrs=%u\n", c[0], c[1], c[2], c[3], c[4],
                c[5], c[6], attrs);
    }
    if (log && n) {
        unsigned long count = strtoul(n, 0, 10);
        for (unsigned long i = 0; i < count; i++) {
            uint64_t word = 0;
            memcpy(&word, params[i], 8);
            fprintf(log, "param %lu %016llx aligned64=%d\n", i, (unsigned long long)word,
                    (int)(((uintptr_t)params[i] % 64) == 0));
        }
        const char *d = getenv("KDSL_STUB_DEREF");
        if (d) {
            uint64_t address = 0, at = 0;
            memcpy(&address, params[strtoul(d, 0, 10)], 8);
            memcpy(&at, (const void *)(uintptr_t)address, 8);
            fprintf(log, "deref %016llx\n", (unsigned long long)at);
        }
    }
    if (log) fclose(log);
    return 0;
}

CUresult cuTensorMapEncodeTiled(void *map, unsigned int type, unsigned int rank, void *address,
                                const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                const uint32_t *element_strides, unsigned int interleave,
                                unsigned int swizzle, unsigned int l2, unsigned int fill) {
    FILE *log = stub_log();
    if (log) {
        fprintf(log, "encode type=%u rank=%u aligned16=%d dims=", type, rank,
                (int)(((uintptr_t)address % 16) == 0));
        for (unsigned int i = 0; i < rank; i++) fprintf(log, "%s%llu", i ? "," : "", (unsigned long long)dims[i]);
        fprintf(log, " strides=");
        for (unsigned int i = 0; i + 1 < rank; i++) fprintf(log, "%s%llu", i ? "," : "", (unsigned long long)strides[i]);
        fprintf(log, " box=");
        for (unsigned int i = 0; i < rank; i++) fprintf(log, "%s%u", i ? "," : "", box[i]);
        fprintf(log, " elementStrides=");
        for (unsigned int i = 0; i < rank; i++) fprintf(log, "%s%u", i ? "," : "", element_strides[i]);
        fprintf(log, " interleave=%u swizzle=%u l2=%u fill=%u map_aligned64=%d\n", interleave, swizzle, l2,
                fill, (int)(((uintptr_t)map % 64) == 0));
        fclose(log);
    }
    CUresult r = chosen("KDSL_STUB_ENCODE");
    if (r != 0) return r;
    memset(map, 0, 128);
    memcpy(map, "STUBTMAP", 8);
    uint64_t a = (uint64_t)(uintptr_t)address;
    memcpy((char *)map + 8, &a, 8);
    return 0;
}
CUresult cuEventCreate(void **e, unsigned int flags) { (void)flags; *e = &event; return 0; }
CUresult cuEventRecord(void *e, void *stream) { (void)e; (void)stream; return 0; }
CUresult cuEventQuery(void *e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
    (void)start; (void)end; *ms = 1.0f; return 0;
}
CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }

CUresult cuGetErrorString(CUresult code, const char **text) {
    switch (code) {
    case 36: *text = "stub: a newer driver is needed"; return 0;
    case 218: *text = "stub: a PTX JIT compilation failed"; return 0;
    case 1: *text = "stub: invalid argument"; return 0;
    case 424242: return 424243;
    default: *text = 0; return 1;
    }
}
