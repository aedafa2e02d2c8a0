/* tn_optimize: fit a tensor train (matrix product state) to a 4-way tensor by gradient descent.
 *
 * The target T[i,j,k,l] is itself a tensor train of bond dimension 2 (hidden random cores). We
 * start from other random cores, record the contraction and the loss |model - T|^2 on a tape
 * every step, get the gradients of all four cores by reverse mode, and take Adam steps.
 * Exits 0 when the relative error falls below 1e-3. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tenferro.h>

#define D 3 /* physical dimension */
#define R 2 /* bond dimension */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double unif(void) { /* xorshift64*, deterministic */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * 0x1.0p-53 * 2 - 1;
}

/* Core shapes: A (D, R), B (R, D, R), C (R, D, R), E (R, D). */
static const int ranks[4] = {2, 3, 3, 2};
static const int64_t shapes[4][3] = {{D, R, 0}, {R, D, R}, {R, D, R}, {R, D, 0}};

static int random_cores(tfe_tensor_f64 *cores, double scale) {
  for (int c = 0; c < 4; c++) {
    if (tfe_empty_f64(&cores[c], ranks[c], shapes[c], TFE_COLMAJOR)) return 1;
    int64_t n = tfe_layout_numel(&cores[c].v.lay);
    for (int64_t i = 0; i < n; i++) cores[c].v.data[i] = scale * unif();
  }
  return 0;
}

/* Records model = A[i,a] B[a,j,b] C[b,k,c] E[c,l] on the tape (leaf ids in ids). */
static tfe_status contract_tt(tfe_tape_f64 *t, const int *ids, int *model) {
  int ab, abc;
  TFE_TRY(tfe_ad_einsum_f64(t, ids[0], (int32_t[]){0, 10}, ids[1], (int32_t[]){10, 1, 11}, 3, (int32_t[]){0, 1, 11}, &ab));
  TFE_TRY(tfe_ad_einsum_f64(t, ab, (int32_t[]){0, 1, 11}, ids[2], (int32_t[]){11, 2, 12}, 4, (int32_t[]){0, 1, 2, 12}, &abc));
  return tfe_ad_einsum_f64(t, abc, (int32_t[]){0, 1, 2, 12}, ids[3], (int32_t[]){12, 3}, 4, (int32_t[]){0, 1, 2, 3}, model);
}

/* One step: loss and gradients at the current cores. */
static tfe_status loss_and_grads(const tfe_tensor_f64 *cores, const tfe_tensor_f64 *target, double *loss,
                                 tfe_tensor_f64 *grads) {
  tfe_tape_f64 t = {0};
  int ids[4], model, tid, diff, sq, sum;
  tfe_status st = TFE_OK;
  for (int c = 0; c < 4 && !st; c++) st = tfe_ad_var_f64(&t, &cores[c].v, NULL, &ids[c]);
  if (!st) st = tfe_ad_var_f64(&t, &target->v, NULL, &tid);
  if (!st) st = contract_tt(&t, ids, &model);
  if (!st) st = tfe_ad_binary_f64(&t, model, tid, TFE_BIN_SUB, &diff);
  if (!st) st = tfe_ad_unary_f64(&t, diff, TFE_UN_SQUARE, 0, &sq);
  if (!st) st = tfe_ad_sum_f64(&t, sq, -1, NULL, &sum);
  if (!st) st = tfe_ad_backward_f64(&t, sum, NULL);
  if (!st) {
    *loss = tfe_ad_value_f64(&t, sum)->data[0];
    for (int c = 0; c < 4 && !st; c++) st = tfe_contiguous_f64(tfe_ad_grad_f64(&t, ids[c]), TFE_COLMAJOR, &grads[c]);
  }
  tfe_tape_free_f64(&t);
  return st;
}

int main(void) {
  tfe_tensor_f64 hidden[4], cores[4], m1[4], m2[4], target = {0};
  memset(hidden, 0, sizeof hidden); memset(cores, 0, sizeof cores);
  memset(m1, 0, sizeof m1); memset(m2, 0, sizeof m2);
  if (random_cores(hidden, 1.0) || random_cores(cores, 0.5) || random_cores(m1, 0) || random_cores(m2, 0)) return 1;
  /* the target: the hidden train contracted once (a plain tape run without gradients) */
  tfe_tape_f64 t = {0};
  int ids[4], model;
  for (int c = 0; c < 4; c++) tfe_ad_var_f64(&t, &hidden[c].v, NULL, &ids[c]);
  if (contract_tt(&t, ids, &model) || tfe_contiguous_f64(tfe_ad_value_f64(&t, model), TFE_COLMAJOR, &target)) {
    fprintf(stderr, "%s\n", tfe_last_error());
    return 1;
  }
  tfe_tape_free_f64(&t);
  double norm2 = 0;
  for (int64_t i = 0; i < tfe_layout_numel(&target.v.lay); i++) norm2 += target.v.data[i] * target.v.data[i];

  const double lr = 0.02, b1 = 0.9, b2 = 0.999;
  double loss = 0, rel = 1;
  int step;
  for (step = 1; step <= 3000; step++) {
    tfe_tensor_f64 g[4];
    memset(g, 0, sizeof g);
    if (loss_and_grads(cores, &target, &loss, g)) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }
    rel = sqrt(loss / norm2);
    if (step % 500 == 1) printf("step %4d  relative error %.3e\n", step, rel);
    for (int c = 0; c < 4; c++) { /* Adam */
      int64_t n = tfe_layout_numel(&cores[c].v.lay);
      for (int64_t i = 0; i < n; i++) {
        double gi = g[c].v.data[i];
        m1[c].v.data[i] = b1 * m1[c].v.data[i] + (1 - b1) * gi;
        m2[c].v.data[i] = b2 * m2[c].v.data[i] + (1 - b2) * gi * gi;
        double mh = m1[c].v.data[i] / (1 - pow(b1, step)), vh = m2[c].v.data[i] / (1 - pow(b2, step));
        cores[c].v.data[i] -= lr * mh / (sqrt(vh) + 1e-12);
      }
      tfe_tensor_release_f64(&g[c]);
    }
    if (rel < 1e-3) break;
  }
  printf("step %4d  relative error %.3e  (loss %.3e)\n", step, rel, loss);
  for (int c = 0; c < 4; c++) {
    tfe_tensor_release_f64(&hidden[c]); tfe_tensor_release_f64(&cores[c]);
    tfe_tensor_release_f64(&m1[c]); tfe_tensor_release_f64(&m2[c]);
  }
  tfe_tensor_release_f64(&target);
  return rel < 1e-3 ? 0 : 1;
}
