/* saxpy from C through the header `kdslc --emit header` writes: no parameter
 * packing, no launch configuration written by hand.
 *
 *   kdslc ../../samples/saxpy.kdsl --emit ptx,header=saxpy.h -o saxpy.ptx
 *   cc -std=c99 -I$CUDA/include saxpy.c -lcuda -o saxpy && ./saxpy check
 *
 * `./saxpy check` compares y with a CPU reference and exits 1 on a mismatch;
 * without `check` it only launches (what the tests do against a stub
 * driver). Every CUDA error is reported with its name and exit status 2. */
#include "saxpy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed(const char *what, CUresult r)
{
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == NULL)
        name = "an unknown result";
    fprintf(stderr, "saxpy: %s: %s (%d)\n", what, name, (int)r);
    return 2;
}

#define TRY(call)                         \
    do {                                  \
        CUresult r_ = (call);             \
        if (r_ != CUDA_SUCCESS)           \
            return failed(#call, r_);     \
    } while (0)

int main(int argc, char **argv)
{
    enum { N = 1000 };
    const float a = 2.5f;
    static float x[N], y[N], out[N];
    int check = argc > 1 && strcmp(argv[1], "check") == 0;
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction saxpy;
    CUdeviceptr dx, dy;
    unsigned int i, bad = 0;

    for (i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = (float)(N - i) * 0.5f;
    }
    TRY(cuInit(0));
    TRY(cuDeviceGet(&device, 0));
    TRY(kdsl_saxpy_module_check_device(device));
    TRY(cuDevicePrimaryCtxRetain(&context, device));
    TRY(cuCtxSetCurrent(context));
    TRY(kdsl_saxpy_module_load(&module));
    TRY(kdsl_saxpy_function(module, &saxpy));
    TRY(cuMemAlloc(&dx, sizeof x));
    TRY(cuMemAlloc(&dy, sizeof y));
    TRY(cuMemcpyHtoD(dx, x, sizeof x));
    TRY(cuMemcpyHtoD(dy, y, sizeof y));
    /* One thread per element: blocks of KDSL_SAXPY_BLOCK_X threads. */
    TRY(kdsl_saxpy_launch(saxpy, NULL, kdsl_dim3_make((N + KDSL_SAXPY_BLOCK_X - 1) / KDSL_SAXPY_BLOCK_X, 1, 1),
                          a, dx, dy, N));
    TRY(cuCtxSynchronize());
    TRY(cuMemcpyDtoH(out, dy, sizeof out));
    if (check) {
        for (i = 0; i < N; i++) {
            float want = a * x[i] + y[i];
            if (out[i] != want && bad++ < 5)
                fprintf(stderr, "saxpy: y[%u] = %g, want %g\n", i, out[i], want);
        }
        if (bad) {
            fprintf(stderr, "saxpy: %u of %d elements differ\n", bad, N);
            return 1;
        }
        printf("saxpy: %d elements match the CPU\n", N);
    }
    TRY(cuMemFree(dx));
    TRY(cuMemFree(dy));
    TRY(cuModuleUnload(module));
    TRY(cuDevicePrimaryCtxRelease(device));
    return 0;
}
