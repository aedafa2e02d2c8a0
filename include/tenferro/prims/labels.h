/* tenferro/prims/labels.h — prims room: the label table of one contraction.
 *
 * A contraction names the axes of A, B (absent: unary) and C by int32 labels. The analysis
 * gathers the distinct labels, each with its size and its stride in every operand (0 where
 * absent), and checks the rules of docs/prims.md: sizes of one label agree, every output
 * label appears in an input, C has no overlapping elements. A label repeated within an
 * operand gets the sum of its strides there: that is the diagonal view, without a copy. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_LABELS_H
#define TENFERRO_PRIMS_LABELS_H
#include <tenferro/tensor/tensor.h>

#define TFE__PR_MAXL (2 * TFE_MAX_RANK)
#define TFE__PR_IN_A 1
#define TFE__PR_IN_B 2
#define TFE__PR_IN_C 4

/* One distinct label: its size and its stride in each operand. A label repeated within an
 * operand gets the sum of its strides there: that is the diagonal view, without a copy. */
typedef struct tfe__pr_lab {
  int32_t label;
  uint8_t in;  /* TFE__PR_IN_* bits */
  int64_t dim;
  int64_t s[3]; /* stride in A, B, C (0 where absent) */
} tfe__pr_lab;

/* Where each small label (0 <= label < TFE__LABMAP) sits in a table being built: index + 1, 0
 * when absent. Labels are most often small; others take a scan of the table. (The scans of
 * every lookup were quadratic: about 0.2 us per call and table at rank 23.) */
#define TFE__LABMAP 256
typedef struct tfe__labmap { uint16_t at[TFE__LABMAP]; } tfe__labmap;
#if 3 * TFE_MAX_RANK >= 65535 /* the largest table (the GPU's: three operands) */
#error "TFE_MAX_RANK too large for tfe__labmap's 16-bit indices"
#endif
/* The index of label x, -1 when absent, -2 when x is outside the map (scan the table). */
static inline int tfe__labmap_get(const tfe__labmap *m, int32_t x) {
  return (uint32_t)x < TFE__LABMAP ? (int)m->at[x] - 1 : -2;
}
static inline void tfe__labmap_set(tfe__labmap *m, int32_t x, int j) {
  if ((uint32_t)x < TFE__LABMAP) m->at[x] = (uint16_t)(j + 1);
}

typedef struct tfe__pr_prob {
  int n;
  bool c_embed; /* a label repeated in C: off-diagonal elements get beta*C */
  tfe__pr_lab lab[TFE__PR_MAXL];
  tfe__labmap map;
} tfe__pr_prob;

#endif
#elif !defined(TENFERRO_PRIMS_LABELS_BODY) /* bodies */
#define TENFERRO_PRIMS_LABELS_BODY
#include <string.h>

TFE_INTERNAL const char *tfe__pr_opname(int op) { return op == 0 ? "A" : op == 1 ? "B" : "C"; }
/* Operand names for messages of binary and unary calls. */
static const char *const tfe__pr_names[3] = {"A", "B", "C"};
static const char *const tfe__pr_names_unary[2] = {"A", "C"};

/* Adds the axes of operand op (0 A, 1 B, 2 C) to p, checking that sizes agree. */
TFE_INTERNAL tfe_status tfe__pr_add_operand(tfe__pr_prob *p, int op, const tfe_layout *L,
                                            const int32_t *labels, const char *where) {
  if (L->rank > 0 && !labels)
    return tfe__fail(TFE_ERR_NULL, where, "labels of %s are NULL", tfe__pr_opname(op));
  for (int i = 0; i < L->rank; i++) {
    int j = tfe__labmap_get(&p->map, labels[i]);
    if (j == -2)
      for (j = 0; j < p->n && p->lab[j].label != labels[i];) j++;
    if (j < 0 || j == p->n) {
      if (op == 2)
        return tfe__fail(TFE_ERR_INVALID, where, "output label %d (C axis %d) appears in no input",
                         (int)labels[i], i);
      tfe__pr_lab z = {labels[i], 0, L->dims[i], {0, 0, 0}};
      j = p->n;
      tfe__labmap_set(&p->map, labels[i], j);
      p->lab[p->n++] = z;
    } else if (p->lab[j].dim != L->dims[i]) {
      return tfe__fail(TFE_ERR_SHAPE, where, "label %d has size %lld in %s axis %d but %lld elsewhere",
                       (int)labels[i], (long long)L->dims[i], tfe__pr_opname(op), i,
                       (long long)p->lab[j].dim);
    }
    uint8_t bit = (uint8_t)(1u << op);
    if (op == 2 && (p->lab[j].in & bit)) p->c_embed = true;
    p->lab[j].in |= bit;
    p->lab[j].s[op] += L->strides[i];
  }
  return TFE_OK;
}

/* Validates the operands (B may be NULL: unary) and builds the label table. */
TFE_INTERNAL tfe_status tfe__pr_analyze(const tfe_layout *A, const int32_t *la, const tfe_layout *B,
                                        const int32_t *lb, const tfe_layout *C, const int32_t *lc,
                                        tfe__pr_prob *p, const char *where) {
  const tfe_layout *L[3] = {A, B, C};
  for (int op = 0; op < 3; op++) {
    if (!L[op]) continue;
    if (tfe_layout_check(L[op], NULL) != TFE_OK) {
      char msg[TFE_ERRMSG_MAX]; /* the layout check's message, without its function name */
      const char *colon = strchr(tfe__ts.errmsg, ':');
      snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : tfe__ts.errmsg);
      return tfe__fail(tfe__ts.errcode, where, "operand %s: %s", tfe__pr_opname(op), msg);
    }
  }
  p->n = 0;
  p->c_embed = false;
  memset(&p->map, 0, sizeof p->map);
  TFE_TRY(tfe__pr_add_operand(p, 0, A, la, where));
  if (B) TFE_TRY(tfe__pr_add_operand(p, 1, B, lb, where));
  TFE_TRY(tfe__pr_add_operand(p, 2, C, lc, where));
  if (!tfe__layout_distinct(C))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C has overlapping elements (two indices address one element)");
  return TFE_OK;
}
#endif
