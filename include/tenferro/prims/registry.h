/* tenferro/prims/registry.h — prims room: the registry of backends and the choice of the
 * backend of a call.
 *
 * Backends are registered by name; the CPU backend ("cpu", id 0) is registered built in.
 * The registry keeps a copy of each vtable; the pointers it hands out stay valid until that
 * backend is unregistered (unregister only what no running call uses). A storage's
 * compute_device is a registry id: the backend that computes on it.
 *
 * The backend of one call is chosen in this order (tenferro-rs issue #602):
 *   1. an explicit argument (tfe_einsum_opts.backend, tfe_contract_on_S, ...);
 *   2. the operands' compute device (tfe_storage.compute_device; operands that name
 *      different ones are an error);
 *   3. a scoped device (tfe_with_device), then 4. a scoped context (tfe_with_context): the
 *      runtime room's per-thread overrides (runtime/device.h);
 *   5. inference from the operands' memory space: the one registered backend that computes
 *      in that space and lets itself be inferred (TFE_BACKEND_INFER); none or several is an
 *      error naming the operands and their devices.
 * A view without storage (the typed views) is host memory without a compute device.
 * Operands in memory spaces other than the chosen backend's are refused (TFE_ERR_DEVICE,
 * naming them) unless the caller asks for a transfer. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_REGISTRY_H
#define TENFERRO_PRIMS_REGISTRY_H
#include <tenferro/prims/backend.h>
#include <tenferro/core/lock.h>

/* Most backends registered at once (ids 0 .. TFE_BACKEND_MAX - 1). */
#define TFE_BACKEND_MAX 16
#define TFE__BE_NAME_MAX 32

/* Which rule chose a backend (tfe_backend_select). */
typedef enum tfe_backend_rule {
  TFE_RULE_ARGUMENT = 0,    /* the caller named it */
  TFE_RULE_COMPUTE_DEVICE,  /* an operand's compute device */
  TFE_RULE_SCOPED_DEVICE,   /* the thread's scoped device (tfe_with_device) */
  TFE_RULE_SCOPED_CONTEXT,  /* the thread's scoped context (tfe_with_context) */
  TFE_RULE_MEMORY_SPACE     /* inferred from the operands' memory space */
} tfe_backend_rule;

/* Where one operand of a call lives, for the choice and its messages. */
typedef struct tfe_operand_place {
  const char *name;        /* "A", "operand 2", ... (NULL: "operand <index>") */
  const tfe_storage *st;   /* NULL: host memory, no compute device (a plain view) */
} tfe_operand_place;

/* Registers a copy of *be under be->name (unique, at most 31 bytes); *id (may be NULL) gets
 * its registry id. The copy's name points into the registry. */
TFE_API tfe_status tfe_backend_register(const tfe_prims_backend *be, int *id);
/* Removes a registered backend (not the built-in "cpu"). */
TFE_API tfe_status tfe_backend_unregister(const char *name);
/* The registered backend of this name, or NULL. */
TFE_API const tfe_prims_backend *tfe_backend_find(const char *name);
/* The backend of registry id `id`, or NULL. */
TFE_API const tfe_prims_backend *tfe_backend_get(int id);
/* The registry id of a registered backend (a pointer this registry handed out), or -1. */
TFE_API int tfe_backend_id(const tfe_prims_backend *be);
/* Writes up to max registered backends (by id) to out; returns how many are registered. */
TFE_API int tfe_backend_list(const tfe_prims_backend **out, int max);
/* Chooses the backend of a call over n operands (see the order above). explicit_be may be
 * NULL; rule (may be NULL) says which rule decided. allow_transfer accepts operands outside
 * the chosen backend's memory space (the caller then moves them). */
TFE_API tfe_status tfe_backend_select(const tfe_prims_backend *explicit_be, int n, const tfe_operand_place *ops,
                                      bool allow_transfer, const tfe_prims_backend **out, tfe_backend_rule *rule);

/* The registry (a member of the prims section of the process state; bodies only). */
#if TFE__IMPL
typedef struct tfe__be_registry {
  tfe__lock lock;
  int ready;                              /* the CPU backend is registered (read under lock) */
  bool used[TFE_BACKEND_MAX];
  char names[TFE_BACKEND_MAX][TFE__BE_NAME_MAX];
  tfe_prims_backend be[TFE_BACKEND_MAX];
  _Atomic(const tfe_prims_backend *) host;  /* inferred for host memory; NULL: not set up or ambiguous */
} tfe__be_registry;
#endif

#endif
#elif !defined(TENFERRO_PRIMS_REGISTRY_BODY) /* bodies */
#define TENFERRO_PRIMS_REGISTRY_BODY
#include <tenferro/prims/backend.h>
#include <stdio.h>

/* ---- the runtime room's scoped levels ------------------------------------------------------ */
/* Rule 3 (a device set for the current scope, e.g. "run what follows on cpu:1") and rule 4
 * (a context: device, threads, stream and allocator together): the thread's innermost
 * override (runtime/device.h); NULL when none is open. */
TFE_INTERNAL const tfe_prims_backend *tfe__be_scoped_device(void) {
  return tfe__ts.rt.ndev ? tfe__rt_scoped_device() : NULL;
}
TFE_INTERNAL const tfe_prims_backend *tfe__be_scoped_context(void) {
  return tfe__ts.rt.nctx ? tfe__rt_scoped_context() : NULL;
}

/* "host" or "gpu:N". */
TFE_INTERNAL const char *tfe__be_space_str(tfe_memspace s, char *buf, size_t n) {
  if (s.kind == TFE_MEM_HOST) snprintf(buf, n, "host");
  else snprintf(buf, n, "%s:%d", s.kind == TFE_MEM_GPU ? "gpu" : "space", s.device);
  return buf;
}
TFE_INTERNAL bool tfe__be_same_space(tfe_memspace a, tfe_memspace b) {
  return a.kind == b.kind && (a.kind == TFE_MEM_HOST || a.device == b.device);
}
TFE_INTERNAL tfe_memspace tfe__be_place_space(const tfe_operand_place *p) {
  return p->st ? p->st->space : TFE_HOST;
}
/* The operand's name for messages. */
TFE_INTERNAL const char *tfe__be_place_name(const tfe_operand_place *p, int k, char *buf, size_t n) {
  if (p->name) return p->name;
  snprintf(buf, n, "operand %d", k);
  return buf;
}

/* Recomputes the backend inferred for host memory (lock held). */
TFE_INTERNAL void tfe__be_rehost(tfe__be_registry *r) {
  const tfe_prims_backend *h = NULL;
  int count = 0;
  for (int i = 0; i < TFE_BACKEND_MAX; i++)
    if (r->used[i] && (r->be[i].flags & TFE_BACKEND_INFER) && r->be[i].space.kind == TFE_MEM_HOST) {
      h = &r->be[i];
      count++;
    }
  atomic_store_explicit(&r->host, count == 1 ? h : NULL, memory_order_release);
}
/* Registers the CPU backend on first use (lock held). */
TFE_INTERNAL void tfe__be_setup_locked(tfe__be_registry *r) {
  if (r->ready) return;
  r->be[0] = tfe__prims_cpu_bare();
  snprintf(r->names[0], TFE__BE_NAME_MAX, "cpu");
  r->be[0].name = r->names[0];
  r->used[0] = true;
  r->ready = 1;
  tfe__be_rehost(r);
}
TFE_INTERNAL tfe__be_registry *tfe__be_lock(void) {
  tfe__be_registry *r = &tfe__st.prims.reg;
  tfe__lock_take(&r->lock);
  tfe__be_setup_locked(r);
  return r;
}
TFE_INTERNAL void tfe__be_unlock(tfe__be_registry *r) { tfe__lock_give(&r->lock); }

/* The CPU backend as registered (id 0). */
TFE_INTERNAL const tfe_prims_backend *tfe__be_cpu(void) {
  tfe__be_registry *r = &tfe__st.prims.reg;
  if (!atomic_load_explicit(&r->host, memory_order_acquire)) tfe__be_unlock(tfe__be_lock());
  return &r->be[0];
}

TFE_API tfe_status tfe_backend_register(const tfe_prims_backend *be, int *id) {
  TFE_CHECK_NULL(be);
  if (!be->name || !be->name[0] || strlen(be->name) >= TFE__BE_NAME_MAX)
    return TFE_FAIL(TFE_ERR_INVALID, "a backend needs a name of 1 to %d bytes", TFE__BE_NAME_MAX - 1);
  tfe__be_registry *r = tfe__be_lock();
  int slot = -1;
  for (int i = 0; i < TFE_BACKEND_MAX; i++) {
    if (r->used[i] && strcmp(r->names[i], be->name) == 0) {
      tfe__be_unlock(r);
      return TFE_FAIL(TFE_ERR_INVALID, "a backend named '%s' is registered already", be->name);
    }
    if (!r->used[i] && slot < 0) slot = i;
  }
  if (slot < 0) {
    tfe__be_unlock(r);
    return TFE_FAIL(TFE_ERR_INVALID, "the registry is full (%d backends)", TFE_BACKEND_MAX);
  }
  r->be[slot] = *be;
  snprintf(r->names[slot], TFE__BE_NAME_MAX, "%s", be->name);
  r->be[slot].name = r->names[slot];
  r->used[slot] = true;
  tfe__be_rehost(r);
  tfe__be_unlock(r);
  if (id) *id = slot;
  return TFE_OK;
}
TFE_API tfe_status tfe_backend_unregister(const char *name) {
  TFE_CHECK_NULL(name);
  tfe__be_registry *r = tfe__be_lock();
  tfe_status st = TFE_OK;
  int i = 0;
  while (i < TFE_BACKEND_MAX && !(r->used[i] && strcmp(r->names[i], name) == 0)) i++;
  if (i == TFE_BACKEND_MAX) st = TFE_FAIL(TFE_ERR_INVALID, "no backend named '%s' is registered", name);
  else if (i == 0) st = TFE_FAIL(TFE_ERR_INVALID, "the built-in cpu backend stays registered");
  else {
    r->used[i] = false;
    tfe__be_rehost(r);
  }
  tfe__be_unlock(r);
  return st;
}
TFE_API const tfe_prims_backend *tfe_backend_find(const char *name) {
  tfe__cpu_enroll_all(); /* the caller may call the CPU's slots with any kind */
  if (!name) return NULL;
  tfe__be_registry *r = tfe__be_lock();
  const tfe_prims_backend *b = NULL;
  for (int i = 0; i < TFE_BACKEND_MAX && !b; i++)
    if (r->used[i] && strcmp(r->names[i], name) == 0) b = &r->be[i];
  tfe__be_unlock(r);
  return b;
}
TFE_INTERNAL const tfe_prims_backend *tfe__be_get(int id) {
  if (id < 0 || id >= TFE_BACKEND_MAX) return NULL;
  tfe__be_registry *r = tfe__be_lock();
  const tfe_prims_backend *b = r->used[id] ? &r->be[id] : NULL;
  tfe__be_unlock(r);
  return b;
}
TFE_API const tfe_prims_backend *tfe_backend_get(int id) {
  tfe__cpu_enroll_all(); /* the caller may call the CPU's slots with any kind */
  return tfe__be_get(id);
}
TFE_API int tfe_backend_id(const tfe_prims_backend *be) {
  tfe__be_registry *r = &tfe__st.prims.reg;
  if (!be || be < r->be || be >= r->be + TFE_BACKEND_MAX) return -1;
  int id = (int)(be - r->be);
  tfe__be_lock();
  bool used = r->used[id];
  tfe__be_unlock(r);
  return used ? id : -1;
}
TFE_API int tfe_backend_list(const tfe_prims_backend **out, int max) {
  tfe__cpu_enroll_all(); /* the caller may call the CPU's slots with any kind */
  tfe__be_registry *r = tfe__be_lock();
  int n = 0;
  for (int i = 0; i < TFE_BACKEND_MAX; i++)
    if (r->used[i]) {
      if (out && n < max) out[n] = &r->be[i];
      n++;
    }
  tfe__be_unlock(r);
  return n;
}

/* Rule 5 (lock held): the one inferable backend computing in space s. */
TFE_INTERNAL tfe_status tfe__be_infer(tfe__be_registry *r, tfe_memspace s, int n, const tfe_operand_place *ops,
                                      const tfe_prims_backend **out, const char *where) {
  int count = 0;
  for (int i = 0; i < TFE_BACKEND_MAX; i++)
    if (r->used[i] && (r->be[i].flags & TFE_BACKEND_INFER) && tfe__be_same_space(r->be[i].space, s)) {
      *out = &r->be[i];
      count++;
    }
  if (count == 1) return TFE_OK; /* the names below only for the messages (snprintf per call cost ~0.3 us) */
  char names[3 * TFE__BE_NAME_MAX + 16] = "", sp[32], nb[24];
  for (int i = 0, k = 0; i < TFE_BACKEND_MAX && k < 3; i++)
    if (r->used[i] && (r->be[i].flags & TFE_BACKEND_INFER) && tfe__be_same_space(r->be[i].space, s)) {
      size_t len = strlen(names);
      snprintf(names + len, sizeof names - len, "%s'%s'", k++ ? ", " : "", r->names[i]);
    }
  char who[160] = "";
  if (n == 0) snprintf(who, sizeof who, "the operands");
  for (int k = 0; k < n && k < 4; k++) {
    size_t len = strlen(who);
    snprintf(who + len, sizeof who - len, "%s%s", k ? ", " : "", tfe__be_place_name(&ops[k], k, nb, sizeof nb));
  }
  *out = NULL;
  if (count == 0)
    return tfe__fail(TFE_ERR_DEVICE, where, "no registered backend computes in %s memory, where %s%s live%s",
                     tfe__be_space_str(s, sp, sizeof sp), who, n > 4 ? ", ..." : "", n == 1 ? "s" : "");
  return tfe__fail(TFE_ERR_DEVICE, where,
                   "ambiguous: %s%s (%s memory, no compute device) could run on %s%s; name one (explicit "
                   "backend or compute device)",
                   who, n > 4 ? ", ..." : "", tfe__be_space_str(s, sp, sizeof sp), names, count > 3 ? ", ..." : "");
}

/* Whether every operand lives in be's memory (or transfers are allowed). */
TFE_INTERNAL tfe_status tfe__be_reach(const tfe_prims_backend *be, int n, const tfe_operand_place *ops,
                                      bool allow_transfer, const char *where) {
  if (allow_transfer) return TFE_OK;
  for (int k = 0; k < n; k++) {
    tfe_memspace s = tfe__be_place_space(&ops[k]);
    if (tfe__be_same_space(s, be->space)) continue;
    char a[32], b[32], nb[24];
    return tfe__fail(TFE_ERR_DEVICE, where,
                     "%s is in %s memory but backend '%s' computes in %s memory (ask for a transfer, or move it)",
                     tfe__be_place_name(&ops[k], k, nb, sizeof nb), tfe__be_space_str(s, a, sizeof a), be->name,
                     tfe__be_space_str(be->space, b, sizeof b));
  }
  return TFE_OK;
}

TFE_INTERNAL tfe_status tfe__be_select_at(const tfe_prims_backend *explicit_be, int n, const tfe_operand_place *ops,
                                          bool allow_transfer, const tfe_prims_backend **out, tfe_backend_rule *rule,
                                          const char *where) {
  tfe_backend_rule why = TFE_RULE_ARGUMENT;
  const tfe_prims_backend *be = explicit_be;
  char a[32], b[32], na[24], nb[24];
  /* 1. explicit argument */
  if (!be) { /* 2. the operands' compute device */
    int dev = -1, who = -1;
    for (int k = 0; k < n; k++) {
      int d = ops[k].st ? ops[k].st->compute_device : -1;
      if (d < 0) continue;
      if (dev >= 0 && d != dev)
        return tfe__fail(TFE_ERR_DEVICE, where, "ambiguous: %s asks for compute device %d, %s for compute device %d",
                         tfe__be_place_name(&ops[who], who, na, sizeof na), dev,
                         tfe__be_place_name(&ops[k], k, nb, sizeof nb), d);
      dev = d;
      who = k;
    }
    if (dev >= 0) {
      be = tfe__rt_device_backend(dev); /* a backend's id, or a further CPU pool (runtime room) */
      if (!be)
        return tfe__fail(TFE_ERR_DEVICE, where, "%s asks for compute device %d, which no registered backend is",
                         tfe__be_place_name(&ops[who], who, na, sizeof na), dev);
      why = TFE_RULE_COMPUTE_DEVICE;
    }
  }
  if (!be && (be = tfe__be_scoped_device())) why = TFE_RULE_SCOPED_DEVICE;   /* 3 (runtime room) */
  if (!be && (be = tfe__be_scoped_context())) why = TFE_RULE_SCOPED_CONTEXT; /* 4 (runtime room) */
  if (!be) { /* 5. the memory space, when every operand is in one */
    tfe_memspace s = n > 0 ? tfe__be_place_space(&ops[0]) : TFE_HOST;
    for (int k = 1; k < n; k++) {
      tfe_memspace t = tfe__be_place_space(&ops[k]);
      if (!tfe__be_same_space(s, t))
        return tfe__fail(TFE_ERR_DEVICE, where,
                         "%s is in %s memory, %s in %s memory: operands in different memory spaces need an "
                         "explicit transfer",
                         tfe__be_place_name(&ops[0], 0, na, sizeof na), tfe__be_space_str(s, a, sizeof a),
                         tfe__be_place_name(&ops[k], k, nb, sizeof nb), tfe__be_space_str(t, b, sizeof b));
    }
    if (s.kind == TFE_MEM_HOST && (be = atomic_load_explicit(&tfe__st.prims.reg.host, memory_order_acquire))) {
      /* the common case: one host backend */
    } else {
      tfe__be_registry *r = tfe__be_lock();
      tfe_status st = tfe__be_infer(r, s, n, ops, &be, where);
      tfe__be_unlock(r);
      TFE_TRY(st);
    }
    why = TFE_RULE_MEMORY_SPACE;
  }
  TFE_TRY(tfe__be_reach(be, n, ops, allow_transfer, where));
  /* operands still being written by stream tasks: the call waits (runtime room) */
  for (int k = 0; k < n; k++)
    if (ops[k].st) TFE_TRY(tfe__rt_storage_sync((tfe_storage *)ops[k].st, where));
  *out = be;
  if (rule) *rule = why;
  return TFE_OK;
}
TFE_API tfe_status tfe_backend_select(const tfe_prims_backend *explicit_be, int n, const tfe_operand_place *ops,
                                      bool allow_transfer, const tfe_prims_backend **out, tfe_backend_rule *rule) {
  tfe__cpu_enroll_all(); /* the caller may call the chosen slots with any kind */
  TFE_CHECK_NULL(out);
  if (n < 0 || (n > 0 && !ops)) return TFE_FAIL(TFE_ERR_INVALID, "need n >= 0 operands (got %d, ops %p)", n, (const void *)ops);
  return tfe__be_select_at(explicit_be, n, ops, allow_transfer, out, rule, __func__);
}

/* The backend of a call over plain views (host memory, no compute device): the explicit one,
 * else the one inferred for host memory. This is the hot path of every typed call: one
 * atomic load. NULL with the message set when no single backend serves host memory. */
TFE_INTERNAL const tfe_prims_backend *tfe__be_for_views(const tfe_prims_backend *explicit_be, int n,
                                                        const char *const *names, const char *where) {
  if (explicit_be) return explicit_be;
  const tfe_prims_backend *be = atomic_load_explicit(&tfe__st.prims.reg.host, memory_order_acquire);
  if (be && !(tfe__ts.rt.ndev | tfe__ts.rt.nctx)) return be; /* no scoped device or context */
  tfe_operand_place ops[4] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
  if (n > 4) n = 4;
  for (int k = 0; k < n; k++) ops[k].name = names ? names[k] : NULL;
  if (tfe__be_select_at(NULL, n, ops, false, &be, NULL, where) != TFE_OK) return NULL;
  if (!tfe__be_same_space(be->space, TFE_HOST)) { /* a scoped device elsewhere: views are host memory */
    char b[32];
    tfe__fail(TFE_ERR_DEVICE, where, "the operands are in host memory but backend '%s' computes in %s memory (ask "
              "for a transfer, or move them)", be->name, tfe__be_space_str(be->space, b, sizeof b));
    return NULL;
  }
  return be;
}
#endif
