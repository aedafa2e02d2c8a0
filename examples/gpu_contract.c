/* examples/gpu_contract.c — a contraction on the GPU when one is found, on the CPU otherwise.
 *
 * The GPU companion unit is compiled into this program (here by including it, so that the
 * example stays one file; a larger program compiles include/tenferro/gpu/tenferro_gpu.c as a
 * unit of its own, docs/gpu.md). Nothing of CUDA is needed to build it: the driver, cuBLAS and
 * NVRTC are opened at run time. Without a GPU, tfe_gpu_init says why and the CPU computes. */
#include <tenferro/gpu/tenferro_gpu.c>
#include <math.h>
#include <stdio.h>

enum { M = 64, K = 48, N = 32 };

/* C[i,k] = sum_j A[i,j] B[j,k] through the operands' backend (GPU memory: "cuda:0"). */
static tfe_status contract(const tfe_dyn *a, const tfe_dyn *b, const tfe_dyn *c) {
  double one = 1, zero = 0;
  return tfe_contract_dyn(&one, a, (const int32_t[]){'i', 'j'}, b, (const int32_t[]){'j', 'k'}, &zero, c,
                          (const int32_t[]){'i', 'k'});
}

/* The same on the device: upload the three operands, contract, download into c. */
static tfe_status on_gpu(const tfe_dyn *a, const tfe_dyn *b, const tfe_dyn *c) {
  const tfe_dyn *host[3] = {a, b, c};
  tfe_dyn dev[3];
  int n = 0;
  tfe_status st = TFE_OK;
  while (n < 3 && (st = tfe_gpu_upload(&dev[n], 0, host[n])) == TFE_OK) n++;
  if (st == TFE_OK && (st = contract(&dev[0], &dev[1], &dev[2])) == TFE_OK) st = tfe_gpu_download(&dev[2], c);
  while (n > 0) tfe_dyn_release(&dev[--n]);
  return st;
}

int main(void) {
  tfe_dyn a, b, c;
  int64_t da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N};
  if (tfe_dyn_empty(&a, TFE_DT_F64, 2, da, TFE_COLMAJOR) || tfe_dyn_empty(&b, TFE_DT_F64, 2, db, TFE_COLMAJOR) ||
      tfe_dyn_zeros(&c, TFE_DT_F64, 2, dc, TFE_COLMAJOR))
    return 1;
  double *x = (double *)a.data, *y = (double *)b.data, *z = (double *)c.data;
  for (int i = 0; i < M * K; i++) x[i] = sin(i + 1.0);
  for (int i = 0; i < K * N; i++) y[i] = cos(i + 0.5);

  bool gpu = tfe_gpu_init() == TFE_OK;
  if (gpu) printf("GPU: %s\n", tfe_gpu_status());
  else printf("no GPU, computing on the CPU (%s)\n", tfe_gpu_last_error());
  tfe_status st = gpu ? on_gpu(&a, &b, &c) : contract(&a, &b, &c);
  if (st != TFE_OK) {
    fprintf(stderr, "contract: %s\n", tfe_last_error());
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < M; i++)
    for (int k = 0; k < N; k++) {
      double want = 0;
      for (int j = 0; j < K; j++) want += x[i + M * j] * y[j + K * k];
      worst = fmax(worst, fabs(z[i + M * k] - want));
    }
  printf("C = A B (%dx%d by %dx%d) on the %s: max error %.3g\n", M, K, K, N, gpu ? "GPU" : "CPU", worst);
  tfe_dyn_release(&a), tfe_dyn_release(&b), tfe_dyn_release(&c);
  tfe_gpu_shutdown();
  return worst < 1e-10 ? 0 : 1;
}
