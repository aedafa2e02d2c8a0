/* tenferro/io/dlpack.h — zero-copy exchange with DLPack (docs/dlpack.md).
 *
 *   tfe_dlpack_import_versioned(m, as, &dyn, &ro)  a DLManagedTensorVersioned (DLPack >= 1.0)
 *   tfe_dlpack_import(m, as, &dyn)                 a legacy DLManagedTensor
 *   tfe_dlpack_export_versioned(&dyn, flags, &m)   a new DLManagedTensorVersioned
 *   tfe_dlpack_export(&dyn, &m)                    a new legacy DLManagedTensor
 *
 * The structs below are declared from the DLPack specification (v1.x) under tenferro names,
 * so that a program may include the official dlpack.h too; they have the same layout (the enum
 * members are spelled int32_t, the size C gives an enum on every ABI tenferro supports) and
 * pointers convert by a cast. Ownership: an import takes the managed tensor on success only
 * (the deleter runs once, when the last reference to the new storage goes); on failure the
 * caller still owns it. An export retains the view's storage; the consumer's single deleter
 * call releases it. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_IO_DLPACK_H
#define TENFERRO_IO_DLPACK_H

#include <tenferro/tensor/tensor.h>

/* ---- the DLPack ABI ------------------------------------------------------------------------- */
#define TFE_DLPACK_MAJOR 1u /* the DLPack major version tenferro speaks */
#define TFE_DLPACK_MINOR 1u

/* DLDeviceType values tenferro maps (others are refused on import). */
enum { TFE_DL_CPU = 1, TFE_DL_CUDA = 2, TFE_DL_CUDA_HOST = 3, TFE_DL_CUDA_MANAGED = 13 };
/* DLDataTypeCode values. */
enum { TFE_DL_INT = 0, TFE_DL_UINT = 1, TFE_DL_FLOAT = 2, TFE_DL_OPAQUE = 3, TFE_DL_BFLOAT = 4,
       TFE_DL_COMPLEX = 5, TFE_DL_BOOL = 6 };
/* DLManagedTensorVersioned.flags bits. */
#define TFE_DL_FLAG_READ_ONLY UINT64_C(1)
#define TFE_DL_FLAG_IS_COPIED UINT64_C(2)

typedef struct tfe_dl_version { uint32_t major, minor; } tfe_dl_version;              /* DLPackVersion */
typedef struct tfe_dl_device { int32_t device_type, device_id; } tfe_dl_device;       /* DLDevice */
typedef struct tfe_dl_dtype { uint8_t code, bits; uint16_t lanes; } tfe_dl_dtype;     /* DLDataType */
typedef struct tfe_dl_tensor {                                                         /* DLTensor */
  void *data;
  tfe_dl_device device;
  int32_t ndim;
  tfe_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides;       /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} tfe_dl_tensor;
typedef struct tfe_dl_managed_tensor {                                                 /* DLManagedTensor */
  tfe_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct tfe_dl_managed_tensor *self);
} tfe_dl_managed_tensor;
typedef struct tfe_dl_managed_tensor_versioned {                                       /* DLManagedTensorVersioned */
  tfe_dl_version version;
  void *manager_ctx;
  void (*deleter)(struct tfe_dl_managed_tensor_versioned *self);
  uint64_t flags;
  tfe_dl_tensor dl_tensor;
} tfe_dl_managed_tensor_versioned;

/* ---- dtypes -------------------------------------------------------------------------------------
 * f32/f64 <-> float 32/64, c64/c128 <-> complex 64/128, i32/i64 <-> int 32/64, lanes 1.
 * Tropical kinds have no DLPack code: they are exported as their float carrier (their bytes are
 * that float), and an import becomes one when `as` names it. */
TFE_API tfe_status tfe_dlpack_dtype(tfe_dtype dt, tfe_dl_dtype *out);

/* ---- import ---------------------------------------------------------------------------------------
 * out views the producer's memory (no copy) and owns a new storage that keeps m alive. `as`:
 * TFE_DT_COUNT for the natural kind, or a kind with the same bytes (a tropical kind for a float
 * tensor). Devices: kDLCPU and kDLCUDAHost become host memory, kDLCUDA and kDLCUDAManaged the
 * space {TFE_MEM_GPU, device_id}. read_only (may be NULL) receives the READ_ONLY flag; a
 * read-only tensor is refused when read_only is NULL, since tenferro views carry no such flag. */
TFE_API tfe_status tfe_dlpack_import_versioned(tfe_dl_managed_tensor_versioned *m, tfe_dtype as, tfe_dyn *out,
                                               bool *read_only);
TFE_API tfe_status tfe_dlpack_import(tfe_dl_managed_tensor *m, tfe_dtype as, tfe_dyn *out);

/* ---- export -------------------------------------------------------------------------------------
 * *out is a new managed tensor on d's elements (shape, strides in elements, byte_offset 0,
 * data at d's first element) holding one reference to d's storage; call (*out)->deleter(*out)
 * exactly once. A borrowed view (d->st == NULL) is exported without an owner: its memory must
 * outlive the consumer. Lazily conjugated views are refused (conjugate them first). flags:
 * TFE_DL_FLAG_READ_ONLY or 0. */
TFE_API tfe_status tfe_dlpack_export_versioned(const tfe_dyn *d, uint64_t flags,
                                               tfe_dl_managed_tensor_versioned **out);
TFE_API tfe_status tfe_dlpack_export(const tfe_dyn *d, tfe_dl_managed_tensor **out);

#endif
#elif !defined(TENFERRO_IO_DLPACK_BODY) /* bodies */
#define TENFERRO_IO_DLPACK_BODY

TFE_API tfe_status tfe_dlpack_dtype(tfe_dtype dt, tfe_dl_dtype *out) {
  TFE_CHECK_NULL(out);
  const tfe_dtype_info *i = tfe_dtype_get(dt);
  if (!i || dt == TFE_DT_CUSTOM) return TFE_FAIL(TFE_ERR_DTYPE, "dtype %d has no DLPack code", (int)dt);
  uint8_t code = i->is_complex                      ? TFE_DL_COMPLEX
                 : i->algebra != TFE_ALGEBRA_STANDARD ? TFE_DL_FLOAT /* the tropical carrier */
                 : i->is_float                      ? TFE_DL_FLOAT
                                                    : TFE_DL_INT;
  out->code = code;
  out->bits = (uint8_t)(i->size * 8);
  out->lanes = 1;
  return TFE_OK;
}

/* The natural kind of a DLPack dtype; TFE_DT_COUNT when tenferro has none. */
TFE_INTERNAL tfe_dtype tfe__dlpack_kind(tfe_dl_dtype t) {
  if (t.lanes != 1) return TFE_DT_COUNT;
  switch (t.code) {
  case TFE_DL_FLOAT: return t.bits == 32 ? TFE_DT_F32 : t.bits == 64 ? TFE_DT_F64 : TFE_DT_COUNT;
  case TFE_DL_COMPLEX: return t.bits == 64 ? TFE_DT_C64 : t.bits == 128 ? TFE_DT_C128 : TFE_DT_COUNT;
  case TFE_DL_INT: return t.bits == 32 ? TFE_DT_I32 : t.bits == 64 ? TFE_DT_I64 : TFE_DT_COUNT;
  default: return TFE_DT_COUNT;
  }
}

/* The kind an import gets: the natural one, or `as` when its DLPack form is t. */
TFE_INTERNAL tfe_status tfe__dlpack_pick(tfe_dl_dtype t, tfe_dtype as, tfe_dtype *dt) {
  if (t.lanes != 1) return TFE_FAIL_AT(TFE_ERR_DTYPE, "tfe_dlpack_import", "lanes %u: vector dtypes are not supported", t.lanes);
  tfe_dtype nat = tfe__dlpack_kind(t);
  if (nat == TFE_DT_COUNT)
    return TFE_FAIL_AT(TFE_ERR_DTYPE, "tfe_dlpack_import", "DLPack dtype (code %u, bits %u) has no tenferro kind",
                       t.code, t.bits);
  if (as == TFE_DT_COUNT || as == nat) { *dt = nat; return TFE_OK; }
  tfe_dl_dtype w;
  if ((unsigned)as >= (unsigned)TFE_DT_COUNT || tfe_dlpack_dtype(as, &w) != TFE_OK || w.code != t.code || w.bits != t.bits)
    return TFE_FAIL_AT(TFE_ERR_DTYPE, "tfe_dlpack_import", "cannot import DLPack dtype (code %u, bits %u) as %s",
                       t.code, t.bits, tfe_dtype_name(as));
  *dt = as;
  return TFE_OK;
}

TFE_INTERNAL tfe_status tfe__dlpack_space(tfe_dl_device dev, tfe_memspace *sp) {
  switch (dev.device_type) {
  case TFE_DL_CPU: case TFE_DL_CUDA_HOST: sp->kind = TFE_MEM_HOST; sp->device = 0; return TFE_OK;
  case TFE_DL_CUDA: case TFE_DL_CUDA_MANAGED:
    if (dev.device_id < 0)
      return TFE_FAIL_AT(TFE_ERR_DEVICE, "tfe_dlpack_import", "negative CUDA device id %d", (int)dev.device_id);
    sp->kind = TFE_MEM_GPU; sp->device = dev.device_id; return TFE_OK;
  default:
    return TFE_FAIL_AT(TFE_ERR_DEVICE, "tfe_dlpack_import", "DLPack device type %d is not supported (CPU and CUDA are)",
                       (int)dev.device_type);
  }
}

/* Checks t and builds the view (without owner): layout relative to the lowest element touched,
 * so that the storage covers exactly [base, base + *bytes). */
TFE_INTERNAL tfe_status tfe__dlpack_view(const tfe_dl_tensor *t, tfe_dtype as, tfe_dyn *v, size_t *bytes) {
  static const char *const W = "tfe_dlpack_import";
  if (t->ndim < 0 || t->ndim > TFE_MAX_RANK)
    return TFE_FAIL_AT(TFE_ERR_RANK, W, "ndim %d outside [0, %d] (TFE_MAX_RANK)", (int)t->ndim, TFE_MAX_RANK);
  if (t->ndim > 0 && !t->shape) return TFE_FAIL_AT(TFE_ERR_NULL, W, "shape is NULL with ndim %d", (int)t->ndim);
  tfe_dtype dt;
  TFE_TRY(tfe__dlpack_pick(t->dtype, as, &dt));
  int64_t es = (int64_t)tfe_dtype_get(dt)->size;
  tfe_layout L = {0};
  L.rank = t->ndim;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, W, "shape[%d] is negative (%lld)", i, (long long)t->shape[i]);
    L.dims[i] = t->shape[i];
  }
  if (t->strides) {
    for (int i = 0; i < t->ndim; i++) L.strides[i] = t->strides[i];
  } else {
    int64_t s = 1; /* compact row-major */
    for (int i = t->ndim - 1; i >= 0; i--) {
      L.strides[i] = s;
      if (L.dims[i] && !tfe__mul_ok(s, L.dims[i], &s))
        return TFE_FAIL_AT(TFE_ERR_OVERFLOW, W, "the element count overflows int64");
    }
  }
  int64_t n, lo = 0, hi = -1;
  TFE_TRY(tfe_layout_check(&L, &n));
  if (n > 0 && !t->data) return TFE_FAIL_AT(TFE_ERR_NULL, W, "data is NULL for %lld elements", (long long)n);
  char *base = (char *)t->data + t->byte_offset;
  size_t align = (size_t)(tfe_dtype_get(dt)->is_complex ? es / 2 : es); /* the real type's alignment */
  if (n > 0 && (uintptr_t)base % align)
    return TFE_FAIL_AT(TFE_ERR_INVALID, W, "data + byte_offset (%llu) is not aligned to %zu bytes",
                       (unsigned long long)t->byte_offset, align);
  if (tfe_layout_extent(&L, &lo, &hi)) {
    if (hi - lo >= INT64_MAX / es) return TFE_FAIL_AT(TFE_ERR_OVERFLOW, W, "the tensor spans more than 2^63 bytes");
    base += lo * es;
    L.offset = -lo;
  }
  *bytes = n > 0 ? (size_t)((hi - lo + 1) * es) : 0;
  v->dtype = dt; v->data = n > 0 ? base : NULL; v->lay = L; v->conj = false; v->st = NULL;
  return TFE_OK;
}

TFE_INTERNAL void tfe__dlpack_drop_v(void *ctx, void *p) {
  (void)p;
  tfe_dl_managed_tensor_versioned *m = (tfe_dl_managed_tensor_versioned *)ctx;
  if (m->deleter) m->deleter(m);
}
TFE_INTERNAL void tfe__dlpack_drop_l(void *ctx, void *p) {
  (void)p;
  tfe_dl_managed_tensor *m = (tfe_dl_managed_tensor *)ctx;
  if (m->deleter) m->deleter(m);
}

/* The storage owns ctx: its free function calls the producer's deleter. */
TFE_INTERNAL tfe_status tfe__dlpack_adopt(const tfe_dl_tensor *t, tfe_dtype as, void (*drop)(void *, void *), void *ctx,
                                          tfe_dyn *out) {
  tfe_dyn v;
  size_t bytes;
  tfe_memspace sp;
  TFE_TRY(tfe__dlpack_space(t->device, &sp));
  TFE_TRY(tfe__dlpack_view(t, as, &v, &bytes));
  TFE_TRY(tfe_storage_wrap(v.data, bytes, sp, drop, ctx, &v.st));
  *out = v;
  return TFE_OK;
}

TFE_API tfe_status tfe_dlpack_import_versioned(tfe_dl_managed_tensor_versioned *m, tfe_dtype as, tfe_dyn *out,
                                               bool *read_only) {
  TFE_CHECK_NULL(m);
  TFE_CHECK_NULL(out);
  if (m->version.major != TFE_DLPACK_MAJOR)
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "DLPack major version %u (tenferro speaks %u)", m->version.major,
                    TFE_DLPACK_MAJOR);
  bool ro = (m->flags & TFE_DL_FLAG_READ_ONLY) != 0;
  if (ro && !read_only)
    return TFE_FAIL(TFE_ERR_INVALID, "the tensor is read-only: pass read_only to accept it and honour the flag");
  TFE_TRY(tfe__dlpack_adopt(&m->dl_tensor, as, tfe__dlpack_drop_v, m, out));
  if (read_only) *read_only = ro;
  return TFE_OK;
}
TFE_API tfe_status tfe_dlpack_import(tfe_dl_managed_tensor *m, tfe_dtype as, tfe_dyn *out) {
  TFE_CHECK_NULL(m);
  TFE_CHECK_NULL(out);
  return tfe__dlpack_adopt(&m->dl_tensor, as, tfe__dlpack_drop_l, m, out);
}

/* ---- export: one allocation holds the managed struct, shape, strides and the reference ---- */
typedef struct tfe__dlpack_box {
  tfe_dl_managed_tensor_versioned v; /* one of v and l is handed out */
  tfe_dl_managed_tensor l;
  tfe_storage *st;
  int64_t shape[TFE_MAX_RANK], strides[TFE_MAX_RANK];
} tfe__dlpack_box;

TFE_INTERNAL void tfe__dlpack_box_free(tfe__dlpack_box *b) {
  tfe_storage_release(b->st);
  tfe__free(b);
}
TFE_INTERNAL void tfe__dlpack_del_v(tfe_dl_managed_tensor_versioned *m) {
  if (m) tfe__dlpack_box_free((tfe__dlpack_box *)m->manager_ctx);
}
TFE_INTERNAL void tfe__dlpack_del_l(tfe_dl_managed_tensor *m) {
  if (m) tfe__dlpack_box_free((tfe__dlpack_box *)m->manager_ctx);
}

TFE_INTERNAL tfe_status tfe__dlpack_box_new(const tfe_dyn *d, const char *where, tfe__dlpack_box **out) {
  if (!d) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'd' is NULL");
  if (!out) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'out' is NULL");
  if (d->conj) return TFE_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "a lazily conjugated view has no DLPack form (tfe_dyn_copy it first)");
  tfe_dl_dtype t;
  if (d->dtype == TFE_DT_CUSTOM || (unsigned)d->dtype >= (unsigned)TFE_DT_COUNT)
    return TFE_FAIL_AT(TFE_ERR_DTYPE, where, "dtype %d has no DLPack code", (int)d->dtype);
  TFE_TRY(tfe_dlpack_dtype(d->dtype, &t));
  int64_t n;
  TFE_TRY(tfe_layout_check(&d->lay, &n));
  tfe_dl_device dev = {TFE_DL_CPU, 0};
  if (d->st && d->st->space.kind == TFE_MEM_GPU) { dev.device_type = TFE_DL_CUDA; dev.device_id = d->st->space.device; }
  tfe__dlpack_box *b = (tfe__dlpack_box *)tfe__alloc(sizeof *b);
  if (!b) return TFE_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the managed tensor");
  memset(b, 0, sizeof *b);
  for (int i = 0; i < d->lay.rank; i++) { b->shape[i] = d->lay.dims[i]; b->strides[i] = d->lay.strides[i]; }
  tfe_dl_tensor *x = &b->v.dl_tensor;
  x->data = d->data ? (char *)d->data + d->lay.offset * (int64_t)tfe_dtype_get(d->dtype)->size : NULL;
  x->device = dev; x->ndim = d->lay.rank; x->dtype = t;
  x->shape = b->shape; x->strides = b->strides; x->byte_offset = 0;
  b->l.dl_tensor = *x;
  b->v.manager_ctx = b->l.manager_ctx = b;
  b->st = d->st;
  tfe_storage_retain(d->st);
  *out = b;
  return TFE_OK;
}

TFE_API tfe_status tfe_dlpack_export_versioned(const tfe_dyn *d, uint64_t flags,
                                               tfe_dl_managed_tensor_versioned **out) {
  if (flags & ~TFE_DL_FLAG_READ_ONLY)
    return TFE_FAIL(TFE_ERR_INVALID, "flags 0x%llx: only TFE_DL_FLAG_READ_ONLY may be asked", (unsigned long long)flags);
  tfe__dlpack_box *b;
  TFE_TRY(tfe__dlpack_box_new(d, __func__, &b));
  b->v.version.major = TFE_DLPACK_MAJOR;
  b->v.version.minor = TFE_DLPACK_MINOR;
  b->v.flags = flags;
  b->v.deleter = tfe__dlpack_del_v;
  *out = &b->v;
  return TFE_OK;
}
TFE_API tfe_status tfe_dlpack_export(const tfe_dyn *d, tfe_dl_managed_tensor **out) {
  tfe__dlpack_box *b;
  TFE_TRY(tfe__dlpack_box_new(d, __func__, &b));
  b->l.deleter = tfe__dlpack_del_l;
  *out = &b->l;
  return TFE_OK;
}
#endif
