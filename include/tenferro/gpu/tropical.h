/* tenferro/gpu/tropical.h — gpu room, companion only: tropical GEMMs on the device (max-plus,
 * min-plus, max-times over f32 and f64: kernels.h's tfe_tgemm_*), for the binary slot (a
 * GEMM-shaped contraction of tropical device operands: gemm.h's layout, this GEMM in place of
 * cuBLAS's) and for tfe_gpu_tropical_matmul (with the argmax of the backward). Parsed only
 * inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_TROPICAL_H
#define TENFERRO_GPU_TROPICAL_H
#ifdef TFE__GPU_COMPANION

static tfe__gpu_dev *tfe__gpu_device(int dev); /* tenferro_gpu.c */

/* The parameter block of tfe_tgemm_*: struct G in kernels.h. */
typedef struct tfe__gpu_gparams {
  long long m, n, k;
  long long ars, acs, abs_, brs, bcs, bbs, crs, ccs, cbs, irs, ics, ibs;
  double alpha, beta;
  int beta_zero, pad;
} tfe__gpu_gparams;

/* The semiring (1 max-plus, 2 min-plus, 3 max-times) and real kind of a tropical dtype; 0
 * when dt is not one. */
static int tfe__gpu_trop(tfe_dtype dt, int *g) {
  switch (dt) {
  case TFE_DT_MAXPLUS_F32: *g = TFE__GK_F32; return 1;
  case TFE_DT_MAXPLUS_F64: *g = TFE__GK_F64; return 1;
  case TFE_DT_MINPLUS_F32: *g = TFE__GK_F32; return 2;
  case TFE_DT_MINPLUS_F64: *g = TFE__GK_F64; return 2;
  case TFE_DT_MAXTIMES_F32: *g = TFE__GK_F32; return 3;
  case TFE_DT_MAXTIMES_F64: *g = TFE__GK_F64; return 3;
  default: return 0;
  }
}
/* The semiring's zero as a double. */
static double tfe__gpu_trop_zero(int s) { return s == 1 ? -INFINITY : s == 2 ? INFINITY : 0; }

/* One launch (device lock held, kernels of kind g loaded): grid of 128 x 128 tiles x batch. */
static tfe_status tfe__gpu_tgemm(tfe__gpu_dev *D, int g, int s, bool arg, tfe__cu_ptr c, tfe__cu_ptr a, tfe__cu_ptr b,
                                 tfe__cu_ptr idx, tfe__gpu_gparams *p, long long batch, const char *where) {
  tfe__cu_function f = D->f_tgemm[g][s - 1][arg];
  if (!f) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s: no tropical GEMM kernel", D->bename);
  if (p->m == 0 || p->n == 0 || batch == 0) return TFE_OK;
  if (arg && p->k > 0x7fffffffLL)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "argmax over k = %lld > 2^31 - 1", p->k);
  long long gx = (p->m + 127) / 128, gy = (p->n + 127) / 128;
  if (gx > 0x7fffffffLL || gy > 65535 || batch > 65535)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "tropical GEMM grid %lld x %lld x %lld too large", gx, gy, batch);
  void *args[] = {&c, &a, &b, &idx, p};
  TFE__CU_TRY(tfe__gpu.cu.cuLaunchKernel(f, (unsigned)gx, (unsigned)gy, (unsigned)batch, 256, 1, 1, 0, D->stream, args,
                                         NULL),
              where);
  return TFE_OK;
}

TFE_GPU_API tfe_status tfe_gpu_tropical_matmul(const tfe_dyn *A, const tfe_dyn *B, const tfe_dyn *C,
                                               const tfe_dyn *argmax) {
  if (!A || !B || !C) return TFE__GPU_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", !A ? "A" : !B ? "B" : "C");
  int g = 0, s = tfe__gpu_trop(A->dtype, &g);
  if (!s)
    return TFE__GPU_FAIL(TFE_ERR_DTYPE, "A is %s: not a tropical kind (max-plus, min-plus, max-times)",
                         tfe_dtype_name(A->dtype));
  if (B->dtype != A->dtype || C->dtype != A->dtype)
    return TFE__GPU_FAIL(TFE_ERR_DTYPE, "A, B and C differ in kind");
  if (argmax && argmax->dtype != TFE_DT_I64) return TFE__GPU_FAIL(TFE_ERR_DTYPE, "argmax is %s, not i64", tfe_dtype_name(argmax->dtype));
  if (A->lay.rank != 2 || B->lay.rank != 2 || C->lay.rank != 2 || (argmax && argmax->lay.rank != 2))
    return TFE__GPU_FAIL(TFE_ERR_RANK, "needs matrices");
  int64_t m = A->lay.dims[0], k = A->lay.dims[1], n = B->lay.dims[1];
  if (B->lay.dims[0] != k || C->lay.dims[0] != m || C->lay.dims[1] != n ||
      (argmax && (argmax->lay.dims[0] != m || argmax->lay.dims[1] != n)))
    return TFE__GPU_FAIL(TFE_ERR_SHAPE, "shapes: A %lld x %lld, B %lld x %lld, C %lld x %lld", (long long)m,
                         (long long)k, (long long)B->lay.dims[0], (long long)n, (long long)C->lay.dims[0],
                         (long long)C->lay.dims[1]);
  const tfe_dyn *ops[4] = {A, B, C, argmax};
  int dev = -1;
  for (int i = 0; i < 4; i++) {
    if (!ops[i]) continue;
    if (!ops[i]->st || ops[i]->st->space.kind != TFE_MEM_GPU)
      return TFE__GPU_FAIL(TFE_ERR_DEVICE, "operand %d is not in GPU memory", i);
    if (dev >= 0 && ops[i]->st->space.device != dev) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "operands on different GPUs");
    dev = ops[i]->st->space.device;
  }
  tfe__gpu_dev *D = tfe__gpu_device(dev);
  if (!D) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "no GPU device %d", dev);
  size_t es = tfe_dtype_get(A->dtype)->size;
  tfe__gpu_gparams p;
  memset(&p, 0, sizeof p);
  p.m = m, p.n = n, p.k = k;
  p.ars = A->lay.strides[0], p.acs = A->lay.strides[1], p.brs = B->lay.strides[0], p.bcs = B->lay.strides[1];
  p.crs = C->lay.strides[0], p.ccs = C->lay.strides[1];
  if (argmax) p.irs = argmax->lay.strides[0], p.ics = argmax->lay.strides[1];
  p.alpha = s == 3 ? 1 : 0, p.beta = tfe__gpu_trop_zero(s), p.beta_zero = 1;
  TFE_TRY(tfe__gpu_enter(D, __func__));
  tfe_status st = tfe__gpu_kernels(D, g, __func__);
  if (st == TFE_OK)
    st = tfe__gpu_tgemm(D, g, s, argmax != NULL, tfe__gpu_addr(C, es), tfe__gpu_addr(A, es), tfe__gpu_addr(B, es),
                        argmax ? tfe__gpu_addr(argmax, 8) : 0, &p, 1, __func__);
  tfe__gpu_leave(D);
  return st;
}

#endif /* TFE__GPU_COMPANION */
#endif
