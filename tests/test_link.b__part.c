/* Second translation unit of tests/test_link.c. */
#include <tenferro.h>

tfe_status link_b_make(tfe_tensor_f64 *t, int64_t n);
void link_b_release(tfe_tensor_f64 *t);
int link_b_threads(void);
const char *link_b_fail(void);
const char *link_b_last_error(void);
double link_b_einsum(void);

tfe_status link_b_make(tfe_tensor_f64 *t, int64_t n) {
  TFE_TRY(tfe_empty_f64(t, 1, &n, TFE_COLMAJOR));
  for (int64_t i = 0; i < n; i++) t->v.data[i] = (double)i;
  return TFE_OK;
}
void link_b_release(tfe_tensor_f64 *t) { tfe_tensor_release_f64(t); }
int link_b_threads(void) { return tfe__st.num_threads; }
const char *link_b_fail(void) {
  double buf[2] = {0, 0};
  tfe_view_f64 v = {0};
  if (tfe_wrap_f64(&v, buf, 2, 1, (int64_t[]){2}, NULL, 0, TFE_COLMAJOR) != TFE_OK) return "wrap failed";
  double x;
  (void)tfe_get_f64(&v, (int64_t[]){7}, &x);
  return tfe_last_error();
}
const char *link_b_last_error(void) { return tfe_last_error(); }
/* A 2x2 matrix product through einsum: the first call of the program sets up the backend
 * registry from this unit. */
double link_b_einsum(void) {
  double a[4] = {1, 2, 3, 4};
  tfe_view_f64 v = {a, {2, 0, {2, 2}, {1, 2}}, false};
  tfe_tensor_f64 c = {0};
  if (tfe_einsum_f64(&c, "ij,jk->ik", 2, (tfe_view_f64[]){v, v}) != TFE_OK) return -1;
  double r = c.v.data[0];
  tfe_tensor_release_f64(&c);
  return r;
}
