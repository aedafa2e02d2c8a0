/* examples/custom_backend.c — plug your own batched GEMM into tenferro.
 *
 * A backend is a vtable of primitive operations (tenferro/prims/backend.h). This program copies
 * the CPU backend, replaces one slot (batched_gemm) by a function that counts its calls and
 * then hands the work to the CPU's own slot, registers the copy under a name, and runs an
 * einsum on it: every contraction of the einsum now calls the new slot for its GEMM phase,
 * while reductions, copies and everything else stay on the CPU code. The result is checked
 * against plain loops. */
#include <math.h>
#include <stdio.h>
#include <tenferro.h>

static long gemm_calls;

/* The replaced slot: d describes C[m,n,batch] = alpha sum_k A[m,k,batch] B[k,n,batch] + beta C
 * in label form (tfe_prim_desc). A real backend would call its own GEMM here. */
static tfe_status counting_gemm(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  (void)be;
  gemm_calls++;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu");
  return cpu->exec[TFE_PRIM_BATCHED_GEMM](cpu, d, plan);
}

int main(void) {
  tfe_prims_backend mine = tfe_prims_cpu();
  mine.name = "counting";
  mine.flags = 0; /* used only when named (the CPU stays the backend inferred for host memory) */
  mine.exec[TFE_PRIM_BATCHED_GEMM] = counting_gemm;
  if (tfe_backend_register(&mine, NULL) != TFE_OK) {
    fprintf(stderr, "register: %s\n", tfe_last_error());
    return 1;
  }

  /* C[i,l] = sum_{j,k} A[i,j] B[j,k] D[k,l]: two contractions, each a GEMM */
  enum { NI = 7, NJ = 5, NK = 6, NL = 4 };
  double a[NI * NJ], b[NJ * NK], dd[NK * NL];
  for (int x = 0; x < NI * NJ; x++) a[x] = sin(x + 1.0);
  for (int x = 0; x < NJ * NK; x++) b[x] = cos(x + 0.5);
  for (int x = 0; x < NK * NL; x++) dd[x] = 1.0 / (x + 2.0);
  tfe_view_f64 ops[3];
  tfe_wrap_f64(&ops[0], a, NI * NJ, 2, (int64_t[]){NI, NJ}, NULL, 0, TFE_COLMAJOR);
  tfe_wrap_f64(&ops[1], b, NJ * NK, 2, (int64_t[]){NJ, NK}, NULL, 0, TFE_COLMAJOR);
  tfe_wrap_f64(&ops[2], dd, NK * NL, 2, (int64_t[]){NK, NL}, NULL, 0, TFE_COLMAJOR);

  tfe_einsum_opts o = {0};
  o.backend = tfe_backend_find("counting");
  tfe_tensor_f64 c = {0};
  if (tfe_einsum_with(&c, "ij,jk,kl->il", 3, ops, &o) != TFE_OK) {
    fprintf(stderr, "einsum: %s\n", tfe_last_error());
    return 1;
  }

  double worst = 0;
  for (int i = 0; i < NI; i++)
    for (int l = 0; l < NL; l++) {
      double want = 0;
      for (int j = 0; j < NJ; j++)
        for (int k = 0; k < NK; k++) want += a[i + NI * j] * b[j + NJ * k] * dd[k + NK * l];
      double got = c.v.data[i + NI * l], err = fabs(got - want);
      if (err > worst) worst = err;
    }
  tfe_tensor_release_f64(&c);
  tfe_backend_unregister("counting");
  printf("backend_calls=%ld max_error=%.3g\n", gemm_calls, worst);
  return gemm_calls > 0 && worst < 1e-12 ? 0 : 1;
}
