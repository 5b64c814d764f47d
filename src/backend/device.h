/* The device layer: what a backend that runs kernels outside the host process provides (OpenCL
 * today, CUDA next), and how the runtime finds one by name. Programs compiled for a device run
 * their kernels there, with one device arena per program and copies planned at the run's edges. */
#ifndef FRIT_DEVICE_H
#define FRIT_DEVICE_H

#include "codegen/codegen.h"

/* What a device reports about itself. */
typedef struct frit_device_props {
  char name[192];          /* platform and device */
  size_t local_mem;        /* bytes of local/shared memory per work-group */
  size_t max_group;        /* largest work-group */
  int subgroup;            /* subgroup/warp width (1 when unknown) */
  int compute_units;
  bool fp64;               /* double precision */
} frit_device_props;

typedef struct frit_device frit_device;

/* A backend: every function returns FRIT_OK or an error kept in ctx naming the backend and call.
 * Buffers and kernels are opaque handles of the backend. A device is opened once per ctx (the
 * ctx owns it: frit_device_get) and serves every program compiled for it in that ctx. */
typedef struct frit_device_ops {
  const char *name;        /* "opencl", "cuda" */
  frit_dialect dialect;
  /* NULL-safe destructor of what open made */
  void (*close)(frit_device *d);
  /* Builds one source holding kernels fn_names[0..n); kernels[i] receives a handle per name,
   * *module the handle that owns them (released with release). */
  frit_status (*build)(frit_ctx *ctx, frit_device *d, const char *source, int n, const char *const *fn_names,
                       void **module, void **kernels);
  void (*release)(frit_device *d, void *module, int n, void **kernels);
  frit_status (*alloc)(frit_ctx *ctx, frit_device *d, size_t bytes, void **buf);
  void (*free)(frit_device *d, void *buf);
  frit_status (*write)(frit_ctx *ctx, frit_device *d, void *buf, size_t offset, const void *src, size_t bytes);
  frit_status (*read)(frit_ctx *ctx, frit_device *d, void *buf, size_t offset, void *dst, size_t bytes);
  /* Runs kernel over g0 = [0, g0_extent) (the renderer's grid-stride loop covers any launch
   * size) with the kernel ABI of frit_device_kernel_abi: the arena, one byte offset per
   * parameter, the variables, the extent; in work-groups of `group` threads per g0 point when
   * group > 0 (frit_cg_kernel.group; never more than props.max_group: frit_device_use_groups
   * checks). Geometry: frit_device_geometry. Asynchronous: read and sync wait for it. */
  frit_status (*launch)(frit_ctx *ctx, frit_device *d, void *kernel, void *arena, const int64_t *offsets,
                        int nparams, const int64_t *vars, int nvars, int64_t g0_extent, int group);
  frit_status (*sync)(frit_ctx *ctx, frit_device *d);
} frit_device_ops;

typedef struct frit_device_module {
  void *module;
  void **kernels;
  int n;
} frit_device_module;

struct frit_device {
  const frit_device_ops *ops;
  frit_device_props props;
  void *impl;              /* the backend's state */
  frit_device_module *modules; /* built so far: released when the device closes */
  int nmodules, cap;
};

/* Builds source's kernels fn_names[0..n) on d; kernels[i] gets their handles, which stay valid
 * until the device closes (with the ctx). */
frit_status frit_device_build(frit_ctx *ctx, frit_device *d, const char *source, int n, const char *const *fn_names,
                              void **kernels);

/* The ctx's open device of this name ("opencl", "cuda"), opened on first use. NULL with the
 * error set when the name is unknown or the backend is unavailable on this machine (its library
 * missing, no device), saying which. */
frit_device *frit_device_get(frit_ctx *ctx, const char *name);
/* The launch of a kernel over g0_extent points on a device of compute_units: *groups work-groups
 * of *size threads. group > 0: that many threads a group, a group a point; else up to 256 a
 * group, a thread a point, and never more threads than points (a kernel without a g0 loop is
 * run whole by every thread launched). At most max_threads threads (0: enough to fill the
 * device, 2048 a compute unit): the kernels' g0 loops stride over the rest. */
void frit_device_geometry(int compute_units, int64_t g0_extent, int group, int64_t max_threads, size_t *groups,
                          size_t *size);
/* Whether a kernel of g0_extent points, each reducing trip elements, runs its work-group
 * rendering (groups of `group` threads) rather than a thread a point: when the points alone
 * cannot fill the device, or each point's reduction is long and the points not too many. */
/* Does a contraction of m x n outputs reducing k elements run its tiled rendering (linear_tile.c)? */
bool frit_device_use_tiles(const frit_device_props *props, int64_t m, int64_t n, int64_t k, int threads);
bool frit_device_use_groups(const frit_device_props *props, int64_t g0_extent, int64_t trip, int group);
/* "cpu" and NULL are the host; every other name must be a device backend. */
bool frit_device_is_host(const char *name);

/* Backends (one folder each under src/backend/). */
frit_status frit_opencl_open(frit_ctx *ctx, frit_device **out);
frit_status frit_cuda_open(frit_ctx *ctx, frit_device **out);

/* The offline CUDA check (src/backend/cuda/cuda.c): source in the CUDA dialect through NVRTC to
 * PTX for sm_80 and sm_90, each assembled by ptxas ($FRIT_PTXAS, else ptxas on PATH). CI runs it
 * on every compiled program with FRIT_CHECK_CUDA=1 (no GPU needed). */
frit_status frit_cuda_check(frit_ctx *ctx, const char *source);

#endif
