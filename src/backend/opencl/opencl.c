/* The OpenCL backend: the ICD loader (libOpenCL) opened with dlopen, so frit builds and runs on
 * machines without OpenCL and says so when asked for it; the first GPU device, else the first
 * device of any type; one in-order queue. The declarations below are the few the API needs. */
#include "backend/device.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

enum {
  CL_SUCCESS = 0,
  CL_DEVICE_TYPE_GPU = 1 << 2,
  CL_DEVICE_TYPE_ALL = (int)0xFFFFFFFF,
  CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002,
  CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004,
  CL_DEVICE_LOCAL_MEM_SIZE = 0x1023,
  CL_DEVICE_NAME = 0x102B,
  CL_DEVICE_DOUBLE_FP_CONFIG = 0x1032,
  CL_PLATFORM_NAME = 0x0902,
  CL_MEM_READ_WRITE = 1 << 0,
  CL_PROGRAM_BUILD_LOG = 0x1183,
  CL_KERNEL_NUM_ARGS = 0x1191,
};

typedef struct cl_api {
  void *lib;
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
  cl_int (*GetPlatformInfo)(cl_platform_id, cl_uint, size_t, void *, size_t *);
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *);
  cl_int (*GetDeviceInfo)(cl_device_id, cl_uint, size_t, void *, size_t *);
  cl_context (*CreateContext)(const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *);
  cl_int (*ReleaseContext)(cl_context);
  cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_bitfield, cl_int *);
  cl_int (*ReleaseCommandQueue)(cl_command_queue);
  cl_mem (*CreateBuffer)(cl_context, cl_bitfield, size_t, void *, cl_int *);
  cl_int (*ReleaseMemObject)(cl_mem);
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *, void *, void *);
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void *, size_t *);
  cl_int (*ReleaseProgram)(cl_program);
  cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
  cl_int (*GetKernelInfo)(cl_kernel, cl_uint, size_t, void *, size_t *);
  cl_int (*ReleaseKernel)(cl_kernel);
  cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
  cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint,
                               const cl_event *, cl_event *);
  cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, const cl_event *,
                              cl_event *);
  cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                 const size_t *, cl_uint, const cl_event *, cl_event *);
  cl_int (*Finish)(cl_command_queue);
} cl_api;

typedef struct cl_state {
  cl_api api;
  cl_device_id dev;
  cl_context context;
  cl_command_queue queue;
} cl_state;

/* a kernel handle: the kernel and how many arguments it declares */
typedef struct cl_kern {
  cl_kernel k;
  cl_uint nargs;
} cl_kern;

static frit_status cl_fail(frit_ctx *ctx, const char *call, cl_int err) {
  return frit_set_error(ctx, FRIT_ERR_RUNTIME, "opencl: %s failed (error %d)", call, (int)err);
}

static void cl_close(frit_device *d) {
  if (!d) return;
  cl_state *s = d->impl;
  if (s) {
    if (s->queue) s->api.ReleaseCommandQueue(s->queue);
    if (s->context) s->api.ReleaseContext(s->context);
    if (s->api.lib) dlclose(s->api.lib);
    free(s);
  }
  free(d);
}

static frit_status cl_build(frit_ctx *ctx, frit_device *d, const char *source, int n, const char *const *fn_names,
                            void **module, void **kernels) {
  cl_state *s = d->impl;
  cl_int err = 0;
  const char *srcs[1] = {source};
  cl_program prog = s->api.CreateProgramWithSource(s->context, 1, srcs, NULL, &err);
  if (!prog || err != CL_SUCCESS) return cl_fail(ctx, "clCreateProgramWithSource", err);
  err = s->api.BuildProgram(prog, 1, &s->dev, "-cl-std=CL1.2", NULL, NULL);
  if (err != CL_SUCCESS) {
    const char *dump = getenv("FRIT_DEVICE_DUMP"); /* a file to keep the source that failed in */
    FILE *f = dump && *dump ? fopen(dump, "w") : NULL;
    if (f) fputs(source, f), fclose(f);
    size_t len = 0;
    s->api.GetProgramBuildInfo(prog, s->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    char *log = calloc(len + 1, 1);
    if (log) s->api.GetProgramBuildInfo(prog, s->dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
    /* the first lines say what is wrong; the rest repeat it */
    if (log && strlen(log) > 2000) strcpy(log + 1990, "\n...");
    frit_status st = frit_set_error(ctx, FRIT_ERR_RUNTIME, "opencl: building the kernels failed (error %d):\n%s",
                                    (int)err, log ? log : "(no build log)");
    free(log);
    s->api.ReleaseProgram(prog);
    return st;
  }
  for (int i = 0; i < n; i++) kernels[i] = NULL;
  for (int i = 0; i < n; i++) {
    cl_kern *k = calloc(1, sizeof *k);
    if (!k) {
      d->ops->release(d, prog, i, kernels);
      return frit_set_error(ctx, FRIT_ERR_NOMEM, "opencl: out of memory");
    }
    k->k = s->api.CreateKernel(prog, fn_names[i], &err);
    if (!k->k || err != CL_SUCCESS ||
        s->api.GetKernelInfo(k->k, CL_KERNEL_NUM_ARGS, sizeof k->nargs, &k->nargs, NULL) != CL_SUCCESS) {
      if (k->k) s->api.ReleaseKernel(k->k);
      free(k);
      d->ops->release(d, prog, i, kernels);
      return cl_fail(ctx, "clCreateKernel", err);
    }
    kernels[i] = k;
  }
  *module = prog;
  return FRIT_OK;
}

static void cl_release(frit_device *d, void *module, int n, void **kernels) {
  cl_state *s = d->impl;
  for (int i = 0; i < n; i++) {
    cl_kern *k = kernels[i];
    if (!k) continue;
    s->api.ReleaseKernel(k->k);
    free(k);
    kernels[i] = NULL;
  }
  if (module) s->api.ReleaseProgram(module);
}

static frit_status cl_alloc(frit_ctx *ctx, frit_device *d, size_t bytes, void **buf) {
  cl_state *s = d->impl;
  cl_int err = 0;
  cl_mem m = s->api.CreateBuffer(s->context, CL_MEM_READ_WRITE, bytes ? bytes : 64, NULL, &err);
  if (!m || err != CL_SUCCESS)
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "opencl: cannot allocate %zu bytes on %s (error %d)", bytes,
                          d->props.name, (int)err);
  *buf = m;
  return FRIT_OK;
}

static void cl_free_buf(frit_device *d, void *buf) {
  cl_state *s = d->impl;
  if (buf) s->api.ReleaseMemObject(buf);
}

static frit_status cl_write(frit_ctx *ctx, frit_device *d, void *buf, size_t off, const void *src, size_t bytes) {
  cl_state *s = d->impl;
  if (!bytes) return FRIT_OK;
  /* blocking: the caller's memory may change as soon as this returns */
  cl_int err = s->api.EnqueueWriteBuffer(s->queue, buf, 1, off, bytes, src, 0, NULL, NULL);
  return err == CL_SUCCESS ? FRIT_OK : cl_fail(ctx, "clEnqueueWriteBuffer", err);
}

static frit_status cl_read(frit_ctx *ctx, frit_device *d, void *buf, size_t off, void *dst, size_t bytes) {
  cl_state *s = d->impl;
  if (!bytes) return FRIT_OK;
  cl_int err = s->api.EnqueueReadBuffer(s->queue, buf, 1, off, bytes, dst, 0, NULL, NULL);
  return err == CL_SUCCESS ? FRIT_OK : cl_fail(ctx, "clEnqueueReadBuffer", err);
}

static frit_status cl_launch(frit_ctx *ctx, frit_device *d, void *kernel, void *arena, const int64_t *offsets,
                             int nparams, const int64_t *vars, int nvars, int64_t g0_extent, int group) {
  cl_state *s = d->impl;
  cl_kern *k = kernel;
  cl_mem a = arena;
  cl_int err = s->api.SetKernelArg(k->k, 0, sizeof a, &a);
  cl_uint arg = 1;
  int64_t ext = g0_extent;
  if (err == CL_SUCCESS && arg < k->nargs) err = s->api.SetKernelArg(k->k, arg++, sizeof ext, &ext);
  for (int i = 0; err == CL_SUCCESS && i < nvars && arg < k->nargs; i++)
    err = s->api.SetKernelArg(k->k, arg++, sizeof vars[i], &vars[i]);
  for (int i = 0; err == CL_SUCCESS && i < nparams && arg < k->nargs; i++)
    err = s->api.SetKernelArg(k->k, arg++, sizeof offsets[i], &offsets[i]);
  if (err != CL_SUCCESS) return cl_fail(ctx, "clSetKernelArg", err);
  if (arg != k->nargs)
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "opencl: kernel takes %u arguments, the launch has %u",
                          (unsigned)k->nargs, (unsigned)arg);
  size_t groups, size;
  frit_device_geometry(d->props.compute_units, g0_extent, group, 0, &groups, &size);
  size_t global = groups * size;
  /* one point a work-item: the driver picks the group size (kernels with large private arrays
   * may not fit 256 a group) */
  err = s->api.EnqueueNDRangeKernel(s->queue, k->k, 1, NULL, &global, group > 0 ? &size : NULL, 0, NULL, NULL);
  return err == CL_SUCCESS ? FRIT_OK : cl_fail(ctx, "clEnqueueNDRangeKernel", err);
}

static frit_status cl_sync(frit_ctx *ctx, frit_device *d) {
  cl_state *s = d->impl;
  cl_int err = s->api.Finish(s->queue);
  return err == CL_SUCCESS ? FRIT_OK : cl_fail(ctx, "clFinish", err);
}

static const frit_device_ops cl_ops = {
    .name = "opencl", .dialect = FRIT_DIALECT_OPENCL, .close = cl_close, .build = cl_build, .release = cl_release,
    .alloc = cl_alloc, .free = cl_free_buf, .write = cl_write, .read = cl_read, .launch = cl_launch, .sync = cl_sync};

static bool load_api(cl_api *a) {
  a->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a->lib) a->lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
  if (!a->lib) return false;
#define SYM(f) (*(void **)&a->f = dlsym(a->lib, "cl" #f)) != NULL
  return SYM(GetPlatformIDs) && SYM(GetPlatformInfo) && SYM(GetDeviceIDs) && SYM(GetDeviceInfo) &&
         SYM(CreateContext) && SYM(ReleaseContext) && SYM(CreateCommandQueue) && SYM(ReleaseCommandQueue) &&
         SYM(CreateBuffer) && SYM(ReleaseMemObject) && SYM(CreateProgramWithSource) && SYM(BuildProgram) &&
         SYM(GetProgramBuildInfo) && SYM(ReleaseProgram) && SYM(CreateKernel) && SYM(GetKernelInfo) &&
         SYM(ReleaseKernel) && SYM(SetKernelArg) && SYM(EnqueueWriteBuffer) && SYM(EnqueueReadBuffer) &&
         SYM(EnqueueNDRangeKernel) && SYM(Finish);
#undef SYM
}

/* The first GPU of any platform, else the first device of any type. */
static bool pick_device(cl_api *a, cl_platform_id *plat, cl_device_id *dev) {
  cl_platform_id ps[16];
  cl_uint np = 0;
  if (a->GetPlatformIDs(16, ps, &np) != CL_SUCCESS || np == 0) return false;
  if (np > 16) np = 16;
  for (int pass = 0; pass < 2; pass++)
    for (cl_uint i = 0; i < np; i++) {
      cl_uint nd = 0;
      if (a->GetDeviceIDs(ps[i], pass == 0 ? CL_DEVICE_TYPE_GPU : (cl_bitfield)0xFFFFFFFFu, 1, dev, &nd) == CL_SUCCESS &&
          nd > 0) {
        *plat = ps[i];
        return true;
      }
    }
  return false;
}

frit_status frit_opencl_open(frit_ctx *ctx, frit_device **out) {
  *out = NULL;
  frit_device *d = calloc(1, sizeof *d);
  cl_state *s = calloc(1, sizeof *s);
  if (!d || !s) {
    free(d), free(s);
    return frit_set_error(ctx, FRIT_ERR_NOMEM, "opencl: out of memory");
  }
  d->ops = &cl_ops, d->impl = s;
  if (!load_api(&s->api)) {
    cl_close(d);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME,
                          "opencl: unavailable: libOpenCL.so.1 (the ICD loader) could not be loaded (%s); install an "
                          "OpenCL driver, e.g. Debian's ocl-icd-libopencl1 and pocl-opencl-icd",
                          dlerror());
  }
  cl_platform_id plat;
  if (!pick_device(&s->api, &plat, &s->dev)) {
    cl_close(d);
    return frit_set_error(ctx, FRIT_ERR_RUNTIME, "opencl: unavailable: no OpenCL platform with a device (is an "
                                                     "ICD such as pocl-opencl-icd installed?)");
  }
  char pname[64] = "", dname[64] = "";
  s->api.GetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
  s->api.GetDeviceInfo(s->dev, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
  snprintf(d->props.name, sizeof d->props.name, "%s / %s", pname, dname);
  cl_ulong lm = 0, fp64 = 0;
  size_t mg = 0;
  cl_uint cu = 0;
  s->api.GetDeviceInfo(s->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL);
  s->api.GetDeviceInfo(s->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof mg, &mg, NULL);
  s->api.GetDeviceInfo(s->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  s->api.GetDeviceInfo(s->dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
  d->props.local_mem = (size_t)lm, d->props.max_group = mg, d->props.compute_units = (int)cu;
  d->props.subgroup = 1, d->props.fp64 = fp64 != 0;
  cl_int err = 0;
  s->context = s->api.CreateContext(NULL, 1, &s->dev, NULL, NULL, &err);
  if (!s->context || err != CL_SUCCESS) {
    cl_close(d);
    return cl_fail(ctx, "clCreateContext", err);
  }
  s->queue = s->api.CreateCommandQueue(s->context, s->dev, 0, &err);
  if (!s->queue || err != CL_SUCCESS) {
    cl_close(d);
    return cl_fail(ctx, "clCreateCommandQueue", err);
  }
  *out = d;
  return FRIT_OK;
}
