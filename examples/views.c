/* views: zero-copy view operations on a wrapped buffer, and the errors they give. */
#include <stdio.h>
#include <tenferro.h>

static void show(const char *name, const tfe_view_f64 *v) {
  printf("%-22s dims [", name);
  for (int k = 0; k < v->lay.rank; k++) printf("%s%lld", k ? ", " : "", (long long)v->lay.dims[k]);
  printf("] strides [");
  for (int k = 0; k < v->lay.rank; k++) printf("%s%lld", k ? ", " : "", (long long)v->lay.strides[k]);
  printf("] offset %lld:", (long long)v->lay.offset);
  int64_t n = tfe_layout_numel(&v->lay), idx[TFE_MAX_RANK] = {0};
  for (int64_t e = 0; e < n; e++) { /* column-major walk */
    double x = 0;
    tfe_get_f64(v, idx, &x);
    printf(" %g", x);
    for (int k = 0; k < v->lay.rank && ++idx[k] == v->lay.dims[k]; k++) idx[k] = 0;
  }
  printf("\n");
}

int main(void) {
  double buf[12];
  for (int i = 0; i < 12; i++) buf[i] = i;
  tfe_view_f64 m, t, d, parts[2];
  if (tfe_wrap_f64(&m, buf, 12, 2, (int64_t[]){3, 4}, NULL, 0, TFE_ROWMAJOR)) goto fail; /* 3x4 */
  show("m (row-major 3x4)", &m);
  if (tfe_permute_f64(&m, (int[]){1, 0}, &t)) goto fail;
  show("transpose", &t);
  if (tfe_slice_axis_f64(&m, 1, 0, 3, 1, &t) || tfe_diagonal_f64(&t, 0, 1, &d)) goto fail;
  show("diagonal of 3x3 block", &d);
  if (tfe_slice_axis_f64(&m, 0, 2, -1, -1, &t)) goto fail;
  show("rows reversed", &t);
  if (tfe_reshape_f64(&m, 3, (int64_t[]){3, 2, 2}, TFE_ROWMAJOR, &d)) goto fail;
  show("reshape 3x2x2 (row)", &d);
  if (tfe_select_f64(&m, 0, 1, &t) || tfe_broadcast_f64(&t, 2, (int64_t[]){2, 4}, &d)) goto fail;
  show("row 1 broadcast", &d);
  if (tfe_split_f64(&m, 1, 2, (int64_t[]){1, 3}, parts)) goto fail;
  tfe_overlap o = TFE_MAYBE_OVERLAPS;
  if (tfe_views_overlap_f64(&parts[0], &parts[1], &o)) goto fail;
  printf("split parts disjoint: %s\n", o == TFE_DISJOINT ? "yes" : "no");
  /* errors are values with a message, never a crash */
  if (tfe_slice_axis_f64(&m, 0, 2, -1, -1, &t) == TFE_OK &&
      tfe_reshape_f64(&t, 1, (int64_t[]){12}, TFE_COLMAJOR, &d) == TFE_ERR_STRIDES)
    printf("expected error: %s\n", tfe_last_error());
  if (tfe_set_f64(&d, (int64_t[]){1, 0}, 1.0) == TFE_OK) goto fail; /* d is still the broadcast */
  printf("expected error: %s\n", tfe_last_error());
  return o == TFE_DISJOINT ? 0 : 1;
fail:
  fprintf(stderr, "unexpected: %s\n", tfe_last_error());
  return 1;
}
