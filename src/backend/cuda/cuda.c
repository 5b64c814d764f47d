/* The CUDA backend: NVRTC compiles the CUDA dialect to PTX (cached on disk by source hash and
 * architecture), the driver API loads and launches it. Both libraries are opened with dlopen, so
 * frit builds and runs without CUDA and says "cuda: unavailable: ..." when asked for it. Also the
 * offline check CI runs without a GPU: every program's CUDA source through NVRTC to PTX for
 * sm_80 and sm_90, and the PTX through ptxas (frit_cuda_check). */
#include "backend/device.h"
#include "codegen/codegen.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------- NVRTC ---------- */

typedef struct _nvrtcProgram *nvrtcProgram;
typedef struct nvrtc_api {
  void *lib;
  int (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *);
  int (*CompileProgram)(nvrtcProgram, int, const char *const *);
  int (*GetPTXSize)(nvrtcProgram, size_t *);
  int (*GetPTX)(nvrtcProgram, char *);
  int (*GetProgramLogSize)(nvrtcProgram, size_t *);
  int (*GetProgramLog)(nvrtcProgram, char *);
  int (*DestroyProgram)(nvrtcProgram *);
} nvrtc_api;

static bool nvrtc_load(nvrtc_api *a) {
  static const char *const names[] = {"libnvrtc.so",      "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !a->lib; i++) a->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  const char *home = getenv("CUDA_HOME");
  if (!a->lib && home) {
    char path[1024];
    snprintf(path, sizeof path, "%s/lib64/libnvrtc.so", home);
    a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!a->lib) return false;
#define SYM(f) (*(void **)&a->f = dlsym(a->lib, "nvrtc" #f)) != NULL
  bool ok = SYM(CreateProgram) && SYM(CompileProgram) && SYM(GetPTXSize) && SYM(GetPTX) && SYM(GetProgramLogSize) &&
            SYM(GetProgramLog) && SYM(DestroyProgram);
#undef SYM
  if (!ok) dlclose(a->lib), a->lib = NULL;
  return ok;
}

/* The PTX cache: cuda/ in the kernel cache directory (NULL: none). */
static char *ptx_path(uint64_t h, int arch) {
  char *base = frit_cg_default_cache_dir();
  if (!base) return NULL;
  char *p = malloc(strlen(base) + 64);
  if (p) {
    sprintf(p, "%s/cuda", base);
    if (frit_cg_make_dirs(p) == 0) sprintf(p, "%s/cuda/frit-%016" PRIx64 "-sm%d.ptx", base, h, arch);
    else free(p), p = NULL;
  }
  free(base);
  return p;
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* Compiles source to PTX for compute capability arch (80, 90, ...); *ptx malloc'd. */
static frit_status nvrtc_ptx(frit_ctx *ctx, nvrtc_api *a, const char *source, int arch, char **ptx) {
  uint64_t h = frit_cg_hash(frit_cg_hash(0xcbf29ce484222325ull, source), "nvrtc-v1 -fmad=false");
  char *cached = ptx_path(h, arch);
  if (cached && (*ptx = read_all(cached))) {
    free(cached);
    return FRIT_OK;
  }
  nvrtcProgram prog = NULL;
  if (a->CreateProgram(&prog, source, "frit.cu", 0, NULL, NULL) != 0) {
    free(cached);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: nvrtcCreateProgram failed");
  }
  char archopt[48];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=compute_%d", arch);
  /* no contraction: a*b+c is two roundings, as on the host (frit_fma where one is wanted) */
  const char *opts[] = {archopt, "--fmad=false", "--std=c++17", "-w"};
  int rc = a->CompileProgram(prog, 4, opts);
  frit_status st = FRIT_OK;
  if (rc != 0) {
    size_t n = 0;
    a->GetProgramLogSize(prog, &n);
    char *log = calloc(n + 1, 1);
    if (log) a->GetProgramLog(prog, log);
    if (log && strlen(log) > 2000) strcpy(log + 1990, "\n...");
    st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: NVRTC failed to compile the kernels for sm_%d:\n%s", arch,
                        log ? log : "(no log)");
    free(log);
  } else {
    size_t n = 0;
    a->GetPTXSize(prog, &n);
    *ptx = malloc(n + 1);
    if (!*ptx) st = frit_set_error(ctx, FRIT_ERR_NOMEM, "cuda: out of memory");
    else {
      a->GetPTX(prog, *ptx);
      (*ptx)[n] = 0;
      if (cached) { /* written whole, then renamed: concurrent processes see all or nothing */
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.%d.tmp", cached, (int)getpid());
        FILE *f = fopen(tmp, "wb");
        if (f) {
          bool ok = fwrite(*ptx, 1, strlen(*ptx), f) == strlen(*ptx);
          ok = fclose(f) == 0 && ok;
          if (!ok || rename(tmp, cached) != 0) unlink(tmp);
        }
      }
    }
  }
  a->DestroyProgram(&prog);
  free(cached);
  return st;
}

/* ---------- the offline check (CI without a GPU) ---------- */

static nvrtc_api check_api;
static bool check_loaded;
static pthread_once_t check_once = PTHREAD_ONCE_INIT;
static void check_load(void) { check_loaded = nvrtc_load(&check_api); }

frit_status frit_cuda_check(frit_ctx *ctx, const char *source) {
  pthread_once(&check_once, check_load);
  if (!check_loaded)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: FRIT_CHECK_CUDA: libnvrtc could not be loaded (install the "
                                                 "CUDA toolkit's NVRTC, or set LD_LIBRARY_PATH)");
  /* one NVRTC compile to compute_80 PTX, which ptxas assembles for sm_80 and for sm_90 (PTX is
   * forward-compatible): the front end, not ptxas, is the expensive part */
  char *ptx = NULL;
  frit_status st = nvrtc_ptx(ctx, &check_api, source, 80, &ptx);
  if (st != FRIT_OK) return st;
  char dir[] = "/tmp/frit-ptx-XXXXXX";
  if (!mkdtemp(dir)) {
    free(ptx);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: cannot create a directory: %s", strerror(errno));
  }
  char in[64], log[64], cmd[1024];
  snprintf(in, sizeof in, "%s/k.ptx", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  FILE *f = fopen(in, "w");
  if (f) fputs(ptx, f), fclose(f);
  free(ptx);
  const char *ptxas = getenv("FRIT_PTXAS");
  static const int archs[] = {80, 90};
  for (size_t i = 0; i < sizeof archs / sizeof archs[0] && st == FRIT_OK; i++) {
    if (ptxas && *ptxas)
      snprintf(cmd, sizeof cmd, "'%s' -arch=sm_%d '%s' -o /dev/null >'%s' 2>&1", ptxas, archs[i], in, log);
    else /* PATH first, then the toolkit's usual place */
      snprintf(cmd, sizeof cmd, "\"$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)\" -arch=sm_%d '%s' "
               "-o /dev/null >'%s' 2>&1", archs[i], in, log);
    int rc = system(cmd);
    if (rc != 0) {
      char *out = read_all(log);
      if (out && strlen(out) > 1500) strcpy(out + 1490, "\n...");
      st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: ptxas -arch=sm_%d rejected the PTX (status %d):\n%s", archs[i],
                          rc, out ? out : "");
      free(out);
    }
  }
  unlink(in), unlink(log), rmdir(dir);
  return st;
}

/* ---------- the driver API ---------- */

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef unsigned long long CUdeviceptr;

enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

typedef struct cu_api {
  void *lib;
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                           void **, void **);
  CUresult (*GetErrorString)(CUresult, const char **);
} cu_api;

typedef struct cu_state {
  cu_api api;
  nvrtc_api rtc;
  CUdevice dev;
  CUcontext cuctx;
  int arch; /* compute capability, e.g. 90 */
  int64_t ept; /* $FRIT_CUDA_EPT when opened (0: unset) */
} cu_state;

static frit_status cu_fail(frit_ctx *ctx, cu_state *s, const char *call, CUresult r) {
  const char *msg = NULL;
  if (s->api.GetErrorString) s->api.GetErrorString(r, &msg);
  return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: %s failed (%d: %s)", call, r, msg ? msg : "unknown error");
}

static void cu_close(frit_device *d) {
  if (!d) return;
  cu_state *s = d->impl;
  if (s) {
    if (s->cuctx) s->api.DevicePrimaryCtxRelease(s->dev);
    if (s->api.lib) dlclose(s->api.lib);
    if (s->rtc.lib) dlclose(s->rtc.lib);
    free(s);
  }
  free(d);
}

static frit_status cu_build(frit_ctx *ctx, frit_device *d, const char *source, int n, const char *const *fn_names,
                            void **module, void **kernels) {
  cu_state *s = d->impl;
  char *ptx = NULL;
  frit_status st = nvrtc_ptx(ctx, &s->rtc, source, s->arch, &ptx);
  if (st != FRIT_OK) return st;
  s->api.CtxSetCurrent(s->cuctx);
  CUmodule m = NULL;
  CUresult r = s->api.ModuleLoadData(&m, ptx);
  free(ptx);
  if (r != 0) return cu_fail(ctx, s, "cuModuleLoadData", r);
  for (int i = 0; i < n; i++) {
    CUfunction f = NULL;
    if ((r = s->api.ModuleGetFunction(&f, m, fn_names[i])) != 0) {
      s->api.ModuleUnload(m);
      return cu_fail(ctx, s, "cuModuleGetFunction", r);
    }
    kernels[i] = f;
  }
  *module = m;
  return FRIT_OK;
}

static void cu_release(frit_device *d, void *module, int n, void **kernels) {
  cu_state *s = d->impl;
  for (int i = 0; i < n; i++) kernels[i] = NULL; /* functions belong to the module */
  if (module) s->api.ModuleUnload(module);
}

static frit_status cu_alloc(frit_ctx *ctx, frit_device *d, size_t bytes, void **buf) {
  cu_state *s = d->impl;
  s->api.CtxSetCurrent(s->cuctx);
  CUdeviceptr p = 0;
  CUresult r = s->api.MemAlloc(&p, bytes ? bytes : 64);
  if (r != 0)
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "cuda: cannot allocate %zu bytes on %s (%d)", bytes, d->props.name, r);
  *buf = (void *)(uintptr_t)p;
  return FRIT_OK;
}

static void cu_free_buf(frit_device *d, void *buf) {
  cu_state *s = d->impl;
  if (buf) s->api.CtxSetCurrent(s->cuctx), s->api.MemFree((CUdeviceptr)(uintptr_t)buf);
}

static frit_status cu_write(frit_ctx *ctx, frit_device *d, void *buf, size_t off, const void *src, size_t bytes) {
  cu_state *s = d->impl;
  if (!bytes) return FRIT_OK;
  s->api.CtxSetCurrent(s->cuctx);
  CUresult r = s->api.MemcpyHtoD((CUdeviceptr)(uintptr_t)buf + off, src, bytes);
  return r == 0 ? FRIT_OK : cu_fail(ctx, s, "cuMemcpyHtoD", r);
}

static frit_status cu_read(frit_ctx *ctx, frit_device *d, void *buf, size_t off, void *dst, size_t bytes) {
  cu_state *s = d->impl;
  if (!bytes) return FRIT_OK;
  s->api.CtxSetCurrent(s->cuctx);
  CUresult r = s->api.MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)buf + off, bytes);
  return r == 0 ? FRIT_OK : cu_fail(ctx, s, "cuMemcpyDtoH", r);
}

static frit_status cu_launch(frit_ctx *ctx, frit_device *d, void *kernel, void *arena, const int64_t *offsets,
                             int nparams, const int64_t *vars, int nvars, int64_t g0_extent, int group) {
  cu_state *s = d->impl;
  /* the kernel reads as many parameters as it declares; the list may be longer */
  int nargs = 2 + nvars + nparams;
  void **args = malloc((size_t)nargs * sizeof *args);
  if (!args) return frit_set_error(ctx, FRIT_ERR_NOMEM, "cuda: out of memory");
  CUdeviceptr a = (CUdeviceptr)(uintptr_t)arena;
  long long ext = g0_extent;
  args[0] = &a, args[1] = &ext;
  for (int i = 0; i < nvars; i++) args[2 + i] = (void *)&vars[i];
  for (int i = 0; i < nparams; i++) args[2 + nvars + i] = (void *)&offsets[i];
  size_t grid, block;
  /* FRIT_CUDA_EPT=k: a thread per k points (a group per point) instead of filling the device once */
  int64_t max_threads = s->ept <= 0 ? 0 : group > 0 ? (int64_t)1 << 30 : (g0_extent + s->ept - 1) / s->ept;
  if (max_threads > ((int64_t)1 << 30)) max_threads = (int64_t)1 << 30;
  frit_device_geometry(d->props.compute_units, g0_extent, group, max_threads, &grid, &block);
  s->api.CtxSetCurrent(s->cuctx);
  CUresult r = s->api.LaunchKernel(kernel, (unsigned)grid, 1, 1, (unsigned)block, 1, 1, 0, NULL, args, NULL);
  free(args);
  return r == 0 ? FRIT_OK : cu_fail(ctx, s, "cuLaunchKernel", r);
}

static frit_status cu_sync(frit_ctx *ctx, frit_device *d) {
  cu_state *s = d->impl;
  s->api.CtxSetCurrent(s->cuctx);
  CUresult r = s->api.CtxSynchronize();
  return r == 0 ? FRIT_OK : cu_fail(ctx, s, "cuCtxSynchronize", r);
}

static const frit_device_ops cu_ops = {
    .name = "cuda", .dialect = FRIT_DIALECT_CUDA, .close = cu_close, .build = cu_build, .release = cu_release,
    .alloc = cu_alloc, .free = cu_free_buf, .write = cu_write, .read = cu_read, .launch = cu_launch, .sync = cu_sync};

static bool cu_load(cu_api *a) {
  a->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a->lib) return false;
#define SYM(f, name) (*(void **)&a->f = dlsym(a->lib, name)) != NULL
  return SYM(Init, "cuInit") && SYM(DeviceGet, "cuDeviceGet") && SYM(DeviceGetCount, "cuDeviceGetCount") &&
         SYM(DeviceGetName, "cuDeviceGetName") && SYM(DeviceGetAttribute, "cuDeviceGetAttribute") &&
         SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
         SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") && SYM(CtxSetCurrent, "cuCtxSetCurrent") &&
         SYM(CtxSynchronize, "cuCtxSynchronize") && SYM(ModuleLoadData, "cuModuleLoadData") &&
         SYM(ModuleUnload, "cuModuleUnload") && SYM(ModuleGetFunction, "cuModuleGetFunction") &&
         SYM(MemAlloc, "cuMemAlloc_v2") && SYM(MemFree, "cuMemFree_v2") && SYM(MemcpyHtoD, "cuMemcpyHtoD_v2") &&
         SYM(MemcpyDtoH, "cuMemcpyDtoH_v2") && SYM(LaunchKernel, "cuLaunchKernel") &&
         SYM(GetErrorString, "cuGetErrorString");
#undef SYM
}

frit_status frit_cuda_open(frit_ctx *ctx, frit_device **out) {
  *out = NULL;
  frit_device *d = calloc(1, sizeof *d);
  cu_state *s = calloc(1, sizeof *s);
  if (!d || !s) {
    free(d), free(s);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "cuda: out of memory");
  }
  d->ops = &cu_ops, d->impl = s;
  if (!cu_load(&s->api)) {
    cu_close(d);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: unavailable: the driver library libcuda.so.1 could not be "
                                                 "loaded (no NVIDIA driver on this machine)");
  }
  if (!nvrtc_load(&s->rtc)) {
    cu_close(d);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: unavailable: libnvrtc (the CUDA toolkit's runtime compiler) "
                                                 "could not be loaded");
  }
  int count = 0;
  CUresult r = s->api.Init(0);
  if (r == 0) r = s->api.DeviceGetCount(&count);
  if (r != 0 || count < 1) {
    cu_close(d);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "cuda: unavailable: no CUDA device (cuInit/cuDeviceGetCount: %d)", r);
  }
  if ((r = s->api.DeviceGet(&s->dev, 0)) != 0 || (r = s->api.DevicePrimaryCtxRetain(&s->cuctx, s->dev)) != 0) {
    frit_status st = cu_fail(ctx, s, "opening device 0", r);
    cu_close(d);
    return st;
  }
  char name[100] = "";
  s->api.DeviceGetName(name, sizeof name - 1, s->dev);
  snprintf(d->props.name, sizeof d->props.name, "CUDA / %s", name);
  int major = 0, minor = 0, v = 0;
  s->api.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->dev);
  s->api.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s->dev);
  s->arch = major * 10 + minor;
  const char *ept = getenv("FRIT_CUDA_EPT");
  s->ept = ept ? atoll(ept) : 0;
  s->api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s->dev);
  d->props.compute_units = v;
  s->api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, s->dev);
  d->props.max_group = (size_t)v;
  s->api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, s->dev);
  d->props.local_mem = (size_t)v;
  s->api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, s->dev);
  d->props.subgroup = v, d->props.fp64 = true;
  *out = d;
  return FRIT_OK;
}
