/* Internal state of the reverse kernels of user explicit kernels, shared by kernel_vjp.c (the
 * reverse kernel) and kernel_vjp_scan.c (the pre-scan of the forward body). */
#ifndef FRIT_KERNEL_VJP_H
#define FRIT_KERNEL_VJP_H

#include "autodiff/autodiff.h"
#include "tensor/kernel_build.h"

/* A write of the forward body (STORE or ATOMIC, to a tensor or a kernel variable). */
typedef struct kv_event {
  frit_uop *stmt;
  int block;
  int loop, var; /* an accumulator update inside loop `loop` (else -1) */
} kv_event;

/* A kernel variable a per-point loop adds into: reg = load + e, once per iteration. */
typedef struct kv_accvar {
  frit_uop *reg, *load, *e;
  frit_uop *init;          /* its value before the loop: a node, or NULL with init_loop >= 0 */
  int init_loop, init_var; /* ... or what an earlier loop left in it */
  int var;                 /* the reverse kernel's variable replaying it */
  frit_tensor *after;      /* its value after the replayed loop */
  frit_tensor *adj;        /* the adjoint of that value */
} kv_accvar;

typedef struct kv_loop {
  frit_uop *end, *range;
  int block; /* the body's block */
  kv_accvar *v;
  int nv;
} kv_loop;

typedef struct kv_block {
  int parent, depth;
  uint32_t ifn; /* the IF whose branch it is (node id; 0 for the kernel's block) */
  int branch;   /* 1 then, 2 else */
} kv_block;

/* A kernel variable read after an if that sets it: cond ? br[0] : br[1], each the value the
 * variable has at the end of that branch (set in it, or from before the if). */
typedef struct kv_phi {
  frit_uop *ifst, *reg;
  int block;          /* the block holding the if */
  frit_uop *br[2];
  bool inside[2];     /* br[k] was set inside branch k */
  int var;            /* the reverse kernel's variable replaying it */
  frit_tensor *after; /* its value after the replayed if */
  frit_tensor *adj;
} kv_phi;

/* An accumulator of the adjoints of one read tensor (or 0-d value): a fresh zero buffer the
 * reverse kernel adds into. */
typedef struct kv_acc {
  frit_uop *target;
  frit_tensor *z;
} kv_acc;

typedef struct kv {
  frit_ctx *ctx;
  const char *name;
  frit_uop *kernel, *T;
  frit_tensor *g, *g_src; /* the cotangent of AFTER(T, K); what the seeds read (fresh when zeroed) */
  bool pass;              /* T's own cotangent is wanted: written elements are zeroed in g_src */
  ad_wants_fn wants;
  void *env;
  kv_block *blocks;
  size_t nblocks, capblocks;
  kv_event *events;
  size_t nevents, capevents;
  kb_map block_of;  /* LOAD/STORE/ATOMIC id -> its block */
  kb_map fwd;       /* forwarded LOAD id -> index in fwdv of the value it reads */
  kb_list fwdv;
  kb_map home;      /* value id -> depth of the innermost block whose leaves it uses */
  kb_map tr;        /* old value id -> index in trv: its recomputation in the reverse kernel */
  frit_tensor **trv;
  size_t ntrv, captrv;
  kb_map adj;       /* old value id -> index in adjv */
  frit_tensor **adjv;
  size_t nadjv, capadjv;
  kv_acc *accs;
  size_t naccs, capaccs;
  kv_loop *loops;
  size_t nloops, caploops;
  kb_map loop_of;  /* END id -> its loop */
  kb_map after_of; /* LOAD of a variable after a loop added into it -> loop * 256 + var */
  kb_list undo;    /* translations made inside a replayed loop or if, dropped when it closes */
  int loop_scope;
  kv_phi *phis;
  size_t nphis, capphis;
  kb_map phi_of;   /* LOAD of a variable after an if that set it -> its phi */
  kb_list ifnodes; /* the IF statements of the body */
  /* the sinks of the innermost open if: outer values that inner adjoints add into */
  kb_list *sink_nodes;
  int *sink_vars;
} kv;

bool kv_grow(frit_ctx *ctx, void **p, size_t *cap, size_t need, size_t elt);
/* Fails with "frit_vjp through explicit kernel '<name>': <why>" (keeping an earlier error). */
bool kv_refuse(kv *s, const char *why);
bool kv_nomem(kv *s);
/* The pre-scan of a block (parent -1 for the kernel's own; ifn/branch: the IF it is a branch of):
 * blocks, writes, loops, and which reads see a value the point stored. */
bool kv_scan_block(kv *s, frit_uop *seq, int parent, uint32_t ifn, int branch);
/* The pre-scan of the kernel's body (kv_scan_block of its block, then checks across blocks). */
bool kv_scan(kv *s, frit_uop *seq);
/* The first STORE after w (in block wb) at w's address that a point can run, or NULL. */
const kv_event *kv_next_store(const kv *s, const frit_uop *w, int wb);

static inline bool is_value_op(frit_op op) {
  return (frit_op_flags(op) & FRIT_F_ALU) || op == FRIT_OP_CAST || op == FRIT_OP_BITCAST;
}
static inline bool is_var_addr(const frit_uop *addr) { return addr->src[0]->op == FRIT_OP_DEFINE_REG; }
static inline frit_uop *addr_of(const frit_uop *stmt) { return stmt->src[0]; }
static inline int64_t serial_of(const frit_uop *stmt) { return stmt->arg.i1; }

static inline bool ancestor_or_self(const kv *s, int a, int b) {
  for (; b >= 0; b = s->blocks[b].parent)
    if (a == b) return true;
  return false;
}

#endif
