/* tenferro/runtime/device.h — runtime room: compute devices and the scoped overrides.
 *
 * A memory space says where data lives (host memory, GPU memory of device N: tfe_memspace,
 * fixed at allocation); a compute device says where work runs. Compute device ids are what
 * tfe_storage.compute_device holds: ids below TFE_BACKEND_MAX are the registered backends
 * (0 is "cpu:0", the CPU backend with the process's thread count; a GPU backend registers
 * its own), ids from TFE_BACKEND_MAX on are further CPU pools (tfe_cpu_device_add), each
 * with its own thread count, computing with the CPU backend in host memory.
 *
 * Scoped overrides are per thread and nest: tfe_with_device(d) ... tfe_end_device() makes d
 * the device of calls whose operands name none (rule 3 of the #602 order, prims/registry.h);
 * tfe_with_context(&ctx) ... tfe_end_context() sets a device (rule 4), a thread count, a
 * default stream for the asynchronous forms, and an allocator for new tensor storage. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_RUNTIME_DEVICE_H
#define TENFERRO_RUNTIME_DEVICE_H
#include <tenferro/tensor/tensor.h>
#include <tenferro/prims/prims.h>
#include <tenferro/runtime/stream.h>

/* Most CPU pools besides cpu:0, and the depth of each per-thread scope stack. */
#define TFE_CPU_POOLS_MAX 16
#define TFE_SCOPE_MAX 16

typedef enum tfe_device_kind { TFE_DEV_CPU = 0, TFE_DEV_CUDA = 1, TFE_DEV_ROCM = 2, TFE_DEV_OTHER = 3 } tfe_device_kind;

typedef struct tfe_device_info {
  int id;                   /* the compute device id (tfe_storage.compute_device) */
  tfe_device_kind kind;
  int index;                /* CPU pool k, CUDA / ROCm device N */
  char name[32];            /* "cpu:0", "cpu:1", or the backend's name */
  int threads;              /* CPU pools: threads one task uses; 0 elsewhere */
  int numa_node;            /* the node its threads and memory are bound to; -1: none */
  tfe_memspace space;       /* the memory it computes in */
  size_t memory_bytes;      /* size of that memory (host: physical memory; 0: unknown) */
  const tfe_prims_backend *backend;
} tfe_device_info;

/* A compute context: what tfe_with_context sets for the calls of this thread. */
typedef struct tfe_context {
  int device;               /* compute device (-1: leave the choice to the other rules) */
  int threads;              /* threads of tenferro's kernels and BLIS per call (0: unchanged) */
  tfe_stream *stream;       /* default stream of the asynchronous forms (NULL: none) */
  const tfe_allocator *allocator; /* allocator of new tensor storage (NULL: the process's) */
} tfe_context;

/* Number of compute devices (ids are not dense: list them with tfe_device_list). */
TFE_API int tfe_device_count(void);
/* Writes up to max devices to out (ids ascending); returns how many there are. */
TFE_API int tfe_device_list(tfe_device_info *out, int max);
TFE_API tfe_status tfe_device_get(int id, tfe_device_info *out);
/* The id of the device named `name` ("cpu:0", "cpu:1", a backend's name). */
TFE_API tfe_status tfe_device_find(const char *name, int *id);
/* A new CPU pool of `threads` threads (numa_node -1: unbound); *id gets its device id. */
TFE_API tfe_status tfe_cpu_device_add(int threads, int numa_node, int *id);
/* Sets the memory size a GPU backend reports for its device (the slot a GPU backend fills). */
TFE_API tfe_status tfe_device_set_memory(int id, size_t bytes);
/* Number of NUMA nodes of the machine (1 where there is no NUMA information). */
TFE_API int tfe_numa_nodes(void);

/* Scoped device: nestable, per thread. */
TFE_API tfe_status tfe_with_device(int device);
TFE_API tfe_status tfe_end_device(void);
/* Scoped context: nestable, per thread. */
TFE_API tfe_status tfe_with_context(const tfe_context *ctx);
TFE_API tfe_status tfe_end_context(void);
/* The innermost scoped device of this thread (-1: none), and context (NULL: none). */
TFE_API int tfe_scoped_device(void);
TFE_API const tfe_context *tfe_scoped_context(void);

/* Tensor compute device: the storage's; -1 when none is set (or no storage). */
TFE_API int tfe_dyn_device(const tfe_dyn *x);
/* Sets x's storage's compute device (-1 clears it); every handle on that storage sees it. */
TFE_API tfe_status tfe_dyn_set_device(const tfe_dyn *x, int device);
/* A handle on x's elements tagged with compute device `device`, leaving x's untouched: the
 * elements are shared through a new storage record that holds a reference to x's. */
TFE_API tfe_status tfe_dyn_with_device(const tfe_dyn *x, int device, tfe_dyn *out);

#if TFE__IMPL
typedef struct tfe__rt_cpu_pool {
  bool used;
  int threads, numa_node;
} tfe__rt_cpu_pool;
/* The runtime's part of the process state (core/state.h). */
typedef struct tfe__rt_state {
  tfe__lock lock;                          /* pending-use records, device table */
  atomic_ullong serial;                    /* streams made so far */
  tfe__rt_cpu_pool pool[TFE_CPU_POOLS_MAX]; /* device TFE_BACKEND_MAX + k */
  int numa_nodes;                          /* 0: not read yet */
  size_t gpu_bytes[TFE_BACKEND_MAX];       /* memory of a backend's device (tfe_device_set_memory) */
  tfe_stream_hooks hooks[TFE_BACKEND_MAX]; /* device streams of a backend (tfe_device_set_hooks) */
} tfe__rt_state;
/* Per thread (core/state.h): scopes, thread count, whether this is a stream worker. */
typedef struct tfe__rt_tstate {
  int dev[TFE_SCOPE_MAX];
  int ndev;
  tfe_context ctx[TFE_SCOPE_MAX];
  int nctx;
  int threads;                             /* > 0: tenferro's thread count on this thread */
  int outer_threads;                       /* the count outside every context */
  bool in_task;
  const tfe_prims_backend *op_be;          /* submission on a device stream: its backend (async.h) */
} tfe__rt_tstate;
/* The backend of compute device id (NULL: no such device); registry.h rule 2. */
TFE_INTERNAL const tfe_prims_backend *tfe__rt_device_backend(int id);
/* Rules 3 and 4 of the choice: the backend of the scoped device / context (NULL: none). */
TFE_INTERNAL const tfe_prims_backend *tfe__rt_scoped_device(void);
TFE_INTERNAL const tfe_prims_backend *tfe__rt_scoped_context(void);
#endif

#endif
#elif !defined(TENFERRO_RUNTIME_DEVICE_BODY) /* bodies */
#define TENFERRO_RUNTIME_DEVICE_BODY
#include <unistd.h>
#include <dirent.h>
#include <dlfcn.h>

TFE_INTERNAL bool tfe__rt_is_pool(int id) {
  return id >= TFE_BACKEND_MAX && id < TFE_BACKEND_MAX + TFE_CPU_POOLS_MAX;
}
TFE_INTERNAL const tfe_prims_backend *tfe__rt_device_backend(int id) {
  if (id < TFE_BACKEND_MAX) return tfe__be_get(id);
  if (!tfe__rt_is_pool(id)) return NULL;
  tfe__rt_lock();
  bool used = tfe__st.rt.pool[id - TFE_BACKEND_MAX].used;
  tfe__rt_unlock();
  return used ? tfe__be_cpu() : NULL;
}
TFE_INTERNAL size_t tfe__rt_host_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
}
TFE_API int tfe_numa_nodes(void) {
  if (tfe__st.rt.numa_nodes > 0) return tfe__st.rt.numa_nodes;
  int n = 0;
  DIR *d = opendir("/sys/devices/system/node");
  for (struct dirent *e; d && (e = readdir(d));)
    if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9') n++;
  if (d) closedir(d);
  tfe__st.rt.numa_nodes = n > 0 ? n : 1; /* the same answer from every thread: a benign race */
  return tfe__st.rt.numa_nodes;
}
/* ---- NUMA: the threads of a CPU pool bound to a node ------------------------------------------
 * Without feature macros (-std=c11) glibc declares neither sched_setaffinity nor libnuma's calls:
 * both are looked up at run time. Binding a worker binds the OpenMP/BLIS threads it starts (they
 * inherit its CPU mask), and the pages they touch first land on the node (Linux's local policy);
 * where libnuma is installed and the machine has several nodes, numa_set_preferred makes that
 * explicit for the worker. */
#define TFE__CPU_WORDS 16 /* CPU masks of 1024 CPUs */
/* A CPU list of /sys ("0-3,8,10-11") as a mask; returns how many CPUs it names. */
TFE_INTERNAL int tfe__cpulist_parse(const char *s, uint64_t *mask) {
  int n = 0;
  memset(mask, 0, TFE__CPU_WORDS * sizeof *mask);
  for (;;) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0) break;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      if (end == s + 1 || b < a) break;
      s = end;
    }
    for (long c = a; c <= b && c < 64 * TFE__CPU_WORDS; c++)
      if (!(mask[c / 64] >> (c % 64) & 1)) { mask[c / 64] |= (uint64_t)1 << (c % 64); n++; }
    if (*s != ',') break;
    s++;
  }
  return n;
}
TFE_INTERNAL int tfe__numa_cpus(int node, uint64_t *mask) {
  char path[80], line[4096] = "";
  snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  bool got = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  return got ? tfe__cpulist_parse(line, mask) : 0;
}
/* A function of the running program or of lib (NULL: none), as an object pointer's bits. */
TFE_INTERNAL bool tfe__rt_sym(const char *lib, const char *name, void *slot) {
  void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : dlopen(NULL, RTLD_NOW);
  void *p = h ? dlsym(h, name) : NULL;
  if (p) memcpy(slot, &p, sizeof p); /* lib stays loaded: the pointer is used after */
  return p != NULL;
}
/* Binds the calling thread (a stream's worker) to the CPUs of `node`. */
TFE_INTERNAL tfe_status tfe__rt_bind_numa(int node) {
  uint64_t mask[TFE__CPU_WORDS];
  if (tfe__numa_cpus(node, mask) == 0) /* no /sys information: nothing to bind to */
    return TFE_FAIL(TFE_ERR_DEVICE, "NUMA node %d lists no CPUs in /sys/devices/system/node", node);
  int (*setaffinity)(int, size_t, const void *) = NULL;
  if (!tfe__rt_sym(NULL, "sched_setaffinity", &setaffinity) || setaffinity(0, sizeof mask, mask) != 0)
    return TFE_FAIL(TFE_ERR_DEVICE, "could not bind a worker to the CPUs of NUMA node %d", node);
  void (*preferred)(int) = NULL;
  if (tfe_numa_nodes() > 1 && tfe__rt_sym("libnuma.so.1", "numa_set_preferred", &preferred)) preferred(node);
  tfe__ts.numa_node1 = node + 1; /* the pool hands this thread blocks of its node only */
  return TFE_OK;
}
/* The NUMA node of compute device id (-1: none). */
TFE_INTERNAL int tfe__device_numa_node(int id) {
  if (!tfe__rt_is_pool(id)) return -1;
  tfe__rt_lock();
  int node = tfe__st.rt.pool[id - TFE_BACKEND_MAX].numa_node;
  tfe__rt_unlock();
  return node;
}

/* Threads one task of device id uses (0: the process's setting). */
TFE_INTERNAL int tfe__device_threads(int id) {
  if (!tfe__rt_is_pool(id)) return 0;
  tfe__rt_lock();
  int t = tfe__st.rt.pool[id - TFE_BACKEND_MAX].threads;
  tfe__rt_unlock();
  return t;
}
/* Fills *out for device id; false when there is no such device. */
TFE_INTERNAL bool tfe__rt_describe(int id, tfe_device_info *out) {
  const tfe_prims_backend *be = tfe__rt_device_backend(id);
  if (!be) return false;
  memset(out, 0, sizeof *out);
  out->id = id;
  out->backend = be;
  out->space = be->space;
  out->numa_node = -1;
  if (tfe__rt_is_pool(id) || id == 0) {
    out->kind = TFE_DEV_CPU;
    out->index = id == 0 ? 0 : id - TFE_BACKEND_MAX + 1;
    snprintf(out->name, sizeof out->name, "cpu:%d", out->index);
    out->threads = id == 0 ? tfe_get_num_threads() : tfe__device_threads(id);
    if (id) out->numa_node = tfe__st.rt.pool[id - TFE_BACKEND_MAX].numa_node;
    out->memory_bytes = tfe__rt_host_bytes();
    return true;
  }
  out->kind = be->space.kind == TFE_MEM_GPU ? TFE_DEV_CUDA : be->space.kind == TFE_MEM_HOST ? TFE_DEV_CPU : TFE_DEV_OTHER;
  out->index = be->space.kind == TFE_MEM_HOST ? 0 : be->space.device;
  snprintf(out->name, sizeof out->name, "%s", be->name);
  out->memory_bytes = be->space.kind == TFE_MEM_HOST ? tfe__rt_host_bytes() : tfe__st.rt.gpu_bytes[id];
  return true;
}
TFE_API int tfe_device_list(tfe_device_info *out, int max) {
  int n = 0;
  for (int id = 0; id < TFE_BACKEND_MAX + TFE_CPU_POOLS_MAX; id++) {
    tfe_device_info d;
    if (!tfe__rt_describe(id, &d)) continue;
    if (out && n < max) out[n] = d;
    n++;
  }
  return n;
}
TFE_API int tfe_device_count(void) { return tfe_device_list(NULL, 0); }
TFE_API tfe_status tfe_device_get(int id, tfe_device_info *out) {
  TFE_CHECK_NULL(out);
  if (!tfe__rt_describe(id, out)) return TFE_FAIL(TFE_ERR_DEVICE, "no compute device has id %d", id);
  return TFE_OK;
}
TFE_API tfe_status tfe_device_find(const char *name, int *id) {
  TFE_CHECK_NULL(name);
  TFE_CHECK_NULL(id);
  for (int d = 0; d < TFE_BACKEND_MAX + TFE_CPU_POOLS_MAX; d++) {
    tfe_device_info info;
    if (tfe__rt_describe(d, &info) && (strcmp(info.name, name) == 0 || (d == 0 && strcmp(name, "cpu") == 0))) {
      *id = d;
      return TFE_OK;
    }
  }
  return TFE_FAIL(TFE_ERR_DEVICE, "no compute device is named '%s'", name);
}
TFE_API tfe_status tfe_cpu_device_add(int threads, int numa_node, int *id) {
  TFE_CHECK_NULL(id);
  if (threads < 1 || threads > 4096) return TFE_FAIL(TFE_ERR_INVALID, "a CPU pool needs 1 to 4096 threads (got %d)", threads);
  if (numa_node < -1 || numa_node >= tfe_numa_nodes())
    return TFE_FAIL(TFE_ERR_INVALID, "NUMA node %d does not exist (the machine has %d)", numa_node, tfe_numa_nodes());
  tfe__rt_lock();
  int k = 0;
  while (k < TFE_CPU_POOLS_MAX && tfe__st.rt.pool[k].used) k++;
  if (k < TFE_CPU_POOLS_MAX) tfe__st.rt.pool[k] = (tfe__rt_cpu_pool){true, threads, numa_node};
  tfe__rt_unlock();
  if (k == TFE_CPU_POOLS_MAX) return TFE_FAIL(TFE_ERR_INVALID, "all %d CPU pools are in use", TFE_CPU_POOLS_MAX);
  *id = TFE_BACKEND_MAX + k;
  return TFE_OK;
}
TFE_API tfe_status tfe_device_set_memory(int id, size_t bytes) {
  const tfe_prims_backend *be = tfe__rt_device_backend(id);
  if (!be || id >= TFE_BACKEND_MAX || be->space.kind == TFE_MEM_HOST)
    return TFE_FAIL(TFE_ERR_DEVICE, "device %d is not a registered device with its own memory", id);
  tfe__st.rt.gpu_bytes[id] = bytes;
  return TFE_OK;
}
/* A CPU compute device (streams run on CPU devices here; a GPU backend brings its own). */
TFE_INTERNAL tfe_status tfe__device_check_cpu(int device, const char *where) {
  tfe_device_info d;
  if (!tfe__rt_describe(device, &d)) return tfe__fail(TFE_ERR_DEVICE, where, "no compute device has id %d", device);
  if (d.space.kind != TFE_MEM_HOST)
    return tfe__fail(TFE_ERR_UNSUPPORTED, where, "device %d (%s) computes in its own memory: its streams come with its "
                     "backend (the GPU room)", device, d.name);
  return TFE_OK;
}

/* ---- scopes ------------------------------------------------------------------------------ */
TFE_API tfe_status tfe_with_device(int device) {
  tfe__rt_tstate *t = &tfe__ts.rt;
  if (!tfe__rt_device_backend(device)) return TFE_FAIL(TFE_ERR_DEVICE, "no compute device has id %d", device);
  if (t->ndev == TFE_SCOPE_MAX) return TFE_FAIL(TFE_ERR_INVALID, "scoped devices nest at most %d deep", TFE_SCOPE_MAX);
  t->dev[t->ndev++] = device;
  return TFE_OK;
}
TFE_API tfe_status tfe_end_device(void) {
  if (!tfe__ts.rt.ndev) return TFE_FAIL(TFE_ERR_INVALID, "no scoped device is open on this thread");
  tfe__ts.rt.ndev--;
  return TFE_OK;
}
TFE_API int tfe_scoped_device(void) { return tfe__ts.rt.ndev ? tfe__ts.rt.dev[tfe__ts.rt.ndev - 1] : -1; }
/* The thread count in force under the innermost context that sets one (0: none). */
TFE_INTERNAL int tfe__rt_ctx_threads(void) {
  for (int i = tfe__ts.rt.nctx - 1; i >= 0; i--)
    if (tfe__ts.rt.ctx[i].threads > 0) return tfe__ts.rt.ctx[i].threads;
  return 0;
}
TFE_API tfe_status tfe_with_context(const tfe_context *ctx) {
  TFE_CHECK_NULL(ctx);
  tfe__rt_tstate *t = &tfe__ts.rt;
  if (ctx->device != -1 && !tfe__rt_device_backend(ctx->device))
    return TFE_FAIL(TFE_ERR_DEVICE, "the context names compute device %d, which does not exist", ctx->device);
  if (ctx->threads < 0) return TFE_FAIL(TFE_ERR_INVALID, "the context's thread count is %d (0 keeps it)", ctx->threads);
  if (ctx->allocator && (!ctx->allocator->alloc || !ctx->allocator->free))
    return TFE_FAIL(TFE_ERR_INVALID, "the context's allocator needs both alloc and free");
  if (t->nctx == TFE_SCOPE_MAX) return TFE_FAIL(TFE_ERR_INVALID, "scoped contexts nest at most %d deep", TFE_SCOPE_MAX);
  if (t->nctx == 0) t->outer_threads = t->threads;
  t->ctx[t->nctx++] = *ctx;
  if (ctx->threads > 0) t->threads = ctx->threads;
  return TFE_OK;
}
TFE_API tfe_status tfe_end_context(void) {
  tfe__rt_tstate *t = &tfe__ts.rt;
  if (!t->nctx) return TFE_FAIL(TFE_ERR_INVALID, "no scoped context is open on this thread");
  t->nctx--;
  int th = tfe__rt_ctx_threads();
  t->threads = th > 0 ? th : t->outer_threads;
  return TFE_OK;
}
TFE_API const tfe_context *tfe_scoped_context(void) {
  return tfe__ts.rt.nctx ? &tfe__ts.rt.ctx[tfe__ts.rt.nctx - 1] : NULL;
}
/* Rules 3 and 4 of the choice (prims/registry.h). */
TFE_INTERNAL const tfe_prims_backend *tfe__rt_scoped_device(void) {
  return tfe__ts.rt.ndev ? tfe__rt_device_backend(tfe__ts.rt.dev[tfe__ts.rt.ndev - 1]) : NULL;
}
TFE_INTERNAL const tfe_prims_backend *tfe__rt_scoped_context(void) {
  for (int i = tfe__ts.rt.nctx - 1; i >= 0; i--)
    if (tfe__ts.rt.ctx[i].device >= 0) return tfe__rt_device_backend(tfe__ts.rt.ctx[i].device);
  return NULL;
}
/* The allocator of new tensor storage under the innermost context that names one. */
TFE_INTERNAL const tfe_allocator *tfe__rt_ctx_allocator(void) {
  for (int i = tfe__ts.rt.nctx - 1; i >= 0; i--)
    if (tfe__ts.rt.ctx[i].allocator) return tfe__ts.rt.ctx[i].allocator;
  return NULL;
}
/* The default stream of the asynchronous forms. */
TFE_INTERNAL tfe_stream *tfe__rt_ctx_stream(void) {
  for (int i = tfe__ts.rt.nctx - 1; i >= 0; i--)
    if (tfe__ts.rt.ctx[i].stream) return tfe__ts.rt.ctx[i].stream;
  return NULL;
}

/* ---- the tensor compute device ----------------------------------------------------------- */
TFE_API int tfe_dyn_device(const tfe_dyn *x) { return x && x->st ? x->st->compute_device : -1; }
TFE_API tfe_status tfe_dyn_set_device(const tfe_dyn *x, int device) {
  TFE_CHECK_NULL(x);
  if (!x->st) return TFE_FAIL(TFE_ERR_INVALID, "a view without storage carries no compute device (use tfe_dyn_with_device)");
  if (device != -1 && !tfe__rt_device_backend(device)) return TFE_FAIL(TFE_ERR_DEVICE, "no compute device has id %d", device);
  x->st->compute_device = device;
  return TFE_OK;
}
TFE_API tfe_status tfe_dyn_with_device(const tfe_dyn *x, int device, tfe_dyn *out) {
  TFE_CHECK_NULL(x);
  TFE_CHECK_NULL(out);
  if (device != -1 && !tfe__rt_device_backend(device)) return TFE_FAIL(TFE_ERR_DEVICE, "no compute device has id %d", device);
  tfe_memspace sp = x->st ? x->st->space : TFE_HOST;
  void *base = x->st ? x->st->ptr : x->data;
  size_t bytes = x->st ? x->st->bytes : 0;
  tfe_storage *s = NULL;
  TFE_TRY(tfe_storage_wrap(base, bytes, sp, x->st ? tfe__rt_unref_storage : NULL, x->st, &s));
  tfe_storage_retain(x->st); /* the new record's reference, dropped by its free hook */
  s->compute_device = device;
  tfe_dyn r = *x;
  r.st = s;
  *out = r;
  return TFE_OK;
}
#endif
