/* libFuzzer target: the einsum notation parser and binder on arbitrary bytes. The first byte
 * picks operand ranks, so binding (ellipsis, sizes, implicit output) is exercised too. */
#include <tenferro.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  char *expr = (char *)malloc(size);
  memcpy(expr, data + 1, size - 1);
  expr[size - 1] = 0;
  tfe__ein_expr e;
  if (tfe__ein_parse(expr, &e) == TFE_OK) {
    if (e.n <= 8) {
      tfe_layout lay[8];
      const tfe_layout *lp[8];
      for (int k = 0; k < e.n; k++) {
        int64_t dims[TFE_MAX_RANK];
        int r = e.t[k].nlab + (e.t[k].ell >= 0 ? (data[0] >> k) & 1 : 0);
        if (r > 8) r = 8;
        for (int a = 0; a < r; a++) dims[a] = 1 + (int64_t)((data[0] + a + k) % 3);
        tfe_layout_dense(r, dims, TFE_COLMAJOR, &lay[k]);
        lp[k] = &lay[k];
      }
      tfe_einsum_plan *p = NULL;
      tfe_einsum_opts o;
      memset(&o, 0, sizeof o);
      o.algo = (tfe_path_algo)(data[0] % 3); /* auto, greedy, dp */
      if (tfe__ein_plan_build(&e, expr, TFE_DT_F64, 8, e.n, lp, &o, &p) == TFE_OK) tfe_einsum_plan_release(p);
    }
    tfe__ein_expr_free(&e);
  }
  free(expr);
  return 0;
}
