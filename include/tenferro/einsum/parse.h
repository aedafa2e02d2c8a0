/* tenferro/einsum_parse.h — einsum notation: UTF-8 parsing, the integer-label form, and the
 * binding of an expression to operand shapes (ellipsis, implicit output, size-1 broadcasting).
 *
 * Grammar (whitespace is ignored everywhere):
 *   expr  := list [ "->" term ]
 *   list  := item ( "," item )*
 *   item  := term | "(" list ")"          parentheses fix the contraction order
 *   term  := ( label | "..." )*            any Unicode character except , ( ) - > . and controls
 * Labels are Unicode code points; the ellipsis axes get synthetic labels TFE_EIN_ELL_BASE + k. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_PARSE_H
#define TENFERRO_EINSUM_PARSE_H

#include <tenferro/tensor/tensor.h>

#define TFE_EIN_ELL_BASE 0x110000          /* first synthetic ellipsis label (above Unicode) */
#define TFE_EIN_MAX_DEPTH 256              /* parenthesis nesting limit */

/* One operand (or the output) as written. */
typedef struct tfe__ein_term {
  int nlab;        /* labels written (ellipsis not counted) */
  int ell;         /* index in lab[] where "..." sits, -1 when absent */
  int32_t *lab;    /* code points or integer labels */
  int32_t *pos;    /* byte offset of each label in the expression (NULL: integer form) */
  int group;       /* innermost parenthesised group, 0 = top level */
  int bytepos;     /* byte offset of the term, -1 in the integer form */
} tfe__ein_term;

typedef struct tfe__ein_expr {
  int n;                /* operands */
  tfe__ein_term *t;
  bool has_out;         /* "->" given (explicit output) */
  tfe__ein_term out;
  int ngroups;          /* groups, group 0 is the whole expression */
  int *gparent;         /* parent of each group (-1 for group 0); children have larger ids */
  bool int_labels;      /* integer-label form: messages print numbers */
  void *mem;            /* the one allocation backing everything above */
} tfe__ein_expr;

/* ---- the string parser ---------------------------------------------------------------------- */
typedef struct tfe__ein_pstate {
  const char *s;
  size_t len, i;
  tfe__ein_expr *e;
  int32_t *labp, *posp; /* next free label / position slots */
} tfe__ein_pstate;

#define TFE__EIN_ERR(ps, at, ...) tfe__ein_perr((ps)->s, (int)(at), __VA_ARGS__)

/* ---- binding: expression + operand shapes -> the label problem ------------------------------- */
/* After binding, labels are dense ids 0..nlab-1. Size-1 axes of a label whose size is larger
 * elsewhere are dropped from that operand (broadcasting: the axis always reads index 0). */
typedef struct tfe__ein_prob {
  int n, nlab;
  bool int_labels;
  int32_t *label_id;     /* nlab: the label as written (code point, synthetic, or integer) */
  int64_t *size;         /* nlab */
  int *rank;             /* n: axes kept per operand */
  int **lab;             /* n: dense label of each kept axis */
  int **axis;            /* n: the operand axis each kept label reads */
  int out_rank;
  int *out_lab;          /* dense labels of the output axes */
  int ngroups;
  int *gparent;          /* ngroups */
  int *group;            /* n: innermost group of each operand */
  void *mem;
} tfe__ein_prob;

#endif
#elif !defined(TENFERRO_EINSUM_PARSE_BODY) /* bodies */
#define TENFERRO_EINSUM_PARSE_BODY
#include <tenferro/tensor/tensor.h>

TFE_INTERNAL void tfe__ein_expr_free(tfe__ein_expr *e) {
  if (e) { tfe__free(e->mem); memset(e, 0, sizeof *e); }
}

/* ---- UTF-8 ----------------------------------------------------------------------------------- */
/* Decodes one code point at s[*i] (len bytes total); false on malformed or overlong input. */
TFE_INTERNAL bool tfe__utf8_next(const unsigned char *s, size_t len, size_t *i, int32_t *cp) {
  unsigned c = s[*i];
  int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
  if (n < 0 || *i + (size_t)n >= len) return false;
  uint32_t v = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k <= n; k++) {
    unsigned d = s[*i + (size_t)k];
    if ((d & 0xC0) != 0x80) return false;
    v = (v << 6) | (d & 0x3F);
  }
  static const uint32_t minv[4] = {0, 0x80, 0x800, 0x10000};
  if (v < minv[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
  *i += (size_t)n + 1;
  *cp = (int32_t)v;
  return true;
}
/* Writes the UTF-8 form of cp (4 bytes at most) and a NUL into buf[8]. */
TFE_INTERNAL void tfe__utf8_put(int32_t cp, char *buf) {
  unsigned v = (unsigned)cp;
  if (v < 0x80) { buf[0] = (char)v; buf[1] = 0; }
  else if (v < 0x800) { buf[0] = (char)(0xC0 | (v >> 6)); buf[1] = (char)(0x80 | (v & 0x3F)); buf[2] = 0; }
  else if (v < 0x10000) {
    buf[0] = (char)(0xE0 | (v >> 12)); buf[1] = (char)(0x80 | ((v >> 6) & 0x3F));
    buf[2] = (char)(0x80 | (v & 0x3F)); buf[3] = 0;
  } else {
    buf[0] = (char)(0xF0 | (v >> 18)); buf[1] = (char)(0x80 | ((v >> 12) & 0x3F));
    buf[2] = (char)(0x80 | ((v >> 6) & 0x3F)); buf[3] = (char)(0x80 | (v & 0x3F)); buf[4] = 0;
  }
}
/* A label as a user reads it: 'x', ...[k] for ellipsis axes, or the number (integer form). */
TFE_INTERNAL const char *tfe__ein_labname(int32_t lab, bool ints, char *buf) {
  if (ints) snprintf(buf, 24, "%d", (int)lab);
  else if (lab >= TFE_EIN_ELL_BASE) snprintf(buf, 24, "...[%d]", (int)(lab - TFE_EIN_ELL_BASE));
  else { buf[0] = '\''; tfe__utf8_put(lab, buf + 1); strcat(buf, "'"); }
  return buf;
}
/* 1-based column (in code points) of byte offset pos of s. */
TFE_INTERNAL int tfe__ein_col(const char *s, int pos) {
  int col = 1;
  for (int i = 0; i < pos && s[i]; i++) col += ((unsigned char)s[i] & 0xC0) != 0x80;
  return col;
}
TFE_INTERNAL tfe_status tfe__ein_perr(const char *s, int at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
TFE_INTERNAL tfe_status tfe__ein_perr(const char *s, int at, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return tfe__fail(TFE_ERR_PARSE, "tfe_einsum", "%s at column %d (byte %d) of \"%.200s\"", what,
                   tfe__ein_col(s, at), at, s);
}

TFE_INTERNAL void tfe__ein_skip_ws(tfe__ein_pstate *ps) {
  while (ps->i < ps->len && (ps->s[ps->i] == ' ' || ps->s[ps->i] == '\t' || ps->s[ps->i] == '\n' ||
                             ps->s[ps->i] == '\r'))
    ps->i++;
}

/* Reads one term (possibly empty) up to a delimiter. */
TFE_INTERNAL tfe_status tfe__ein_term_parse(tfe__ein_pstate *ps, tfe__ein_term *t, bool is_out) {
  t->nlab = 0; t->ell = -1; t->lab = ps->labp; t->pos = ps->posp; t->bytepos = (int)ps->i;
  for (;;) {
    tfe__ein_skip_ws(ps);
    if (ps->i >= ps->len) return TFE_OK;
    size_t at = ps->i;
    char c = ps->s[at];
    if (c == ',' || c == ')' || c == '(' || c == '-') return TFE_OK;
    if (c == '>') return TFE__EIN_ERR(ps, at, "'>' without '-' before it");
    if (c == '.') {
      if (at + 2 >= ps->len || ps->s[at + 1] != '.' || ps->s[at + 2] != '.')
        return TFE__EIN_ERR(ps, at, "'.' that is not part of an ellipsis '...'");
      if (t->ell >= 0) return TFE__EIN_ERR(ps, at, "second ellipsis '...' in one %s", is_out ? "output" : "term");
      t->ell = t->nlab;
      ps->i += 3;
      continue;
    }
    int32_t cp;
    if (!tfe__utf8_next((const unsigned char *)ps->s, ps->len, &ps->i, &cp))
      return TFE__EIN_ERR(ps, at, "invalid UTF-8 byte 0x%02x", (unsigned)(unsigned char)c);
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
      return TFE__EIN_ERR(ps, at, "control character U+%04X is not a label", (unsigned)cp);
    t->lab[t->nlab] = cp;
    t->pos[t->nlab] = (int32_t)at;
    t->nlab++;
  }
}
TFE_INTERNAL void tfe__ein_term_commit(tfe__ein_pstate *ps, const tfe__ein_term *t) {
  ps->labp += t->nlab; ps->posp += t->nlab;
}

/* Parses expr into e (one allocation, freed by tfe__ein_expr_free). */
TFE_INTERNAL tfe_status tfe__ein_parse(const char *expr, tfe__ein_expr *e) {
  memset(e, 0, sizeof *e);
  if (!expr) return TFE_FAIL(TFE_ERR_NULL, "argument 'expr' is NULL");
  size_t len = strlen(expr);
  if (len > (1u << 24)) return TFE_FAIL(TFE_ERR_INVALID, "expression of %zu bytes is too long", len);
  size_t nterm = 1, ngroup = 1;
  for (size_t i = 0; i < len; i++) { nterm += expr[i] == ',' || expr[i] == '('; ngroup += expr[i] == '('; }
  size_t bytes = (nterm + 1) * sizeof(tfe__ein_term) + 2 * (len + 1) * sizeof(int32_t) + ngroup * sizeof(int) + 64;
  char *mem = (char *)tfe__alloc(bytes);
  if (!mem) return TFE_ERR_ALLOC;
  e->mem = mem;
  e->t = (tfe__ein_term *)mem;
  e->gparent = (int *)(mem + (nterm + 1) * sizeof(tfe__ein_term));
  tfe__ein_pstate ps = {expr, len, 0, e, NULL, NULL};
  ps.labp = (int32_t *)(e->gparent + ngroup);
  ps.posp = ps.labp + len + 1;
  e->ngroups = 1; e->gparent[0] = -1;
  int cur = 0, depth = 0;
  int open_at[TFE_EIN_MAX_DEPTH + 1];
  tfe_status st = TFE_OK;
  for (;;) { /* at the start of an item */
    tfe__ein_skip_ws(&ps);
    if (ps.i < len && expr[ps.i] == '(') {
      if (depth == TFE_EIN_MAX_DEPTH) { st = TFE__EIN_ERR(&ps, ps.i, "parentheses nested deeper than %d", TFE_EIN_MAX_DEPTH); break; }
      open_at[++depth] = (int)ps.i;
      e->gparent[e->ngroups] = cur;
      cur = e->ngroups++;
      ps.i++;
      continue;
    }
    tfe__ein_term *t = &e->t[e->n];
    if ((st = tfe__ein_term_parse(&ps, t, false)) != TFE_OK) break;
    t->group = cur;
    tfe__ein_term_commit(&ps, t);
    e->n++;
    for (;;) { /* after an item: closing parentheses */
      tfe__ein_skip_ws(&ps);
      if (ps.i >= len || expr[ps.i] != ')') break;
      if (depth == 0) { st = TFE__EIN_ERR(&ps, ps.i, "')' without a matching '('"); goto done; }
      depth--; cur = e->gparent[cur]; ps.i++;
    }
    if (ps.i >= len) break;
    char c = expr[ps.i];
    if (c == ',') { ps.i++; continue; }
    if (c == '(') { st = TFE__EIN_ERR(&ps, ps.i, "'(' inside a term (a ',' is missing)"); break; }
    /* c == '-' */
    if (ps.i + 1 >= len || expr[ps.i + 1] != '>') { st = TFE__EIN_ERR(&ps, ps.i, "'-' not followed by '>'"); break; }
    if (depth > 0) { st = TFE__EIN_ERR(&ps, ps.i, "'->' inside parentheses"); break; }
    ps.i += 2;
    e->has_out = true;
    if ((st = tfe__ein_term_parse(&ps, &e->out, true)) != TFE_OK) break;
    tfe__ein_term_commit(&ps, &e->out);
    tfe__ein_skip_ws(&ps);
    if (ps.i < len) {
      const char *what = expr[ps.i] == ',' ? "',' in the output (one output only)"
                       : expr[ps.i] == '-' ? (ps.i + 1 < len && expr[ps.i + 1] == '>' ? "second '->'" : "'-' not followed by '>'")
                       : "parenthesis in the output";
      st = TFE__EIN_ERR(&ps, ps.i, "%s", what);
    }
    break;
  }
done:
  if (st == TFE_OK && depth > 0) st = TFE__EIN_ERR(&ps, open_at[depth], "'(' is never closed");
  if (st != TFE_OK) { tfe__ein_expr_free(e); return st; }
  return TFE_OK;
}

/* The integer-label form: labels[k] holds ranks[k] labels of operand k; out_labels NULL means
 * implicit output (numpy's rule), otherwise out_rank labels. */
TFE_INTERNAL tfe_status tfe__ein_from_labels(int n, const int *ranks, const int32_t *const *labels,
                                            const int32_t *out_labels, int out_rank, tfe__ein_expr *e) {
  memset(e, 0, sizeof *e);
  if (n < 1) return TFE_FAIL(TFE_ERR_INVALID, "einsum needs at least one operand (got %d)", n);
  TFE_CHECK_NULL(ranks);
  TFE_CHECK_NULL(labels);
  size_t total = 0;
  for (int k = 0; k < n; k++) {
    if (ranks[k] < 0 || ranks[k] > TFE_MAX_RANK)
      return TFE_FAIL(TFE_ERR_RANK, "operand %d has rank %d outside [0, %d]", k, ranks[k], TFE_MAX_RANK);
    if (ranks[k] > 0 && !labels[k]) return TFE_FAIL(TFE_ERR_NULL, "labels of operand %d are NULL", k);
    total += (size_t)ranks[k];
  }
  if (out_labels && (out_rank < 0 || out_rank > TFE_MAX_RANK))
    return TFE_FAIL(TFE_ERR_RANK, "output rank %d outside [0, %d]", out_rank, TFE_MAX_RANK);
  if (out_labels) total += (size_t)out_rank;
  size_t bytes = (size_t)(n + 1) * sizeof(tfe__ein_term) + (total + 1) * sizeof(int32_t) + sizeof(int) + 64;
  char *mem = (char *)tfe__alloc(bytes);
  if (!mem) return TFE_ERR_ALLOC;
  e->mem = mem; e->n = n; e->int_labels = true;
  e->t = (tfe__ein_term *)mem;
  e->gparent = (int *)(mem + (size_t)(n + 1) * sizeof(tfe__ein_term));
  e->gparent[0] = -1; e->ngroups = 1;
  int32_t *lp = (int32_t *)(e->gparent + 2);
  for (int k = 0; k <= n; k++) {
    const int32_t *src = k < n ? labels[k] : out_labels;
    int r = k < n ? ranks[k] : (out_labels ? out_rank : 0);
    tfe__ein_term *t = k < n ? &e->t[k] : &e->out;
    t->nlab = r; t->ell = -1; t->lab = lp; t->pos = NULL; t->group = 0; t->bytepos = -1;
    if (r) memcpy(lp, src, (size_t)r * sizeof(int32_t));
    lp += r;
  }
  e->has_out = out_labels != NULL;
  return TFE_OK;
}

TFE_INTERNAL void tfe__ein_prob_free(tfe__ein_prob *p) {
  if (p) { tfe__free(p->mem); memset(p, 0, sizeof *p); }
}

/* Error helper naming a label and where it was written. */
TFE_INTERNAL tfe_status tfe__ein_labfail(tfe_status st, const tfe__ein_expr *e, const char *src,
                                         int32_t pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
TFE_INTERNAL tfe_status tfe__ein_labfail(tfe_status st, const tfe__ein_expr *e, const char *src,
                                         int32_t pos, const char *fmt, ...) {
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (src && pos >= 0 && !e->int_labels)
    return tfe__fail(st, "tfe_einsum", "%s (column %d)", what, tfe__ein_col(src, pos));
  return tfe__fail(st, "tfe_einsum", "%s", what);
}

TFE_INTERNAL int tfe__ein_cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}
TFE_INTERNAL int tfe__ein_find(const int32_t *ids, int n, int32_t v) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int m = (lo + hi) / 2;
    if (ids[m] == v) return m;
    if (ids[m] < v) lo = m + 1; else hi = m - 1;
  }
  return -1;
}

/* The written label of axis a of term t of rank r (ellipsis expanded, E = widest ellipsis). */
TFE_INTERNAL int32_t tfe__ein_axis_label(const tfe__ein_term *t, int r, int a, int32_t *pos) {
  int ne = t->ell < 0 ? 0 : r - t->nlab;
  if (t->ell < 0 || a < t->ell) { *pos = t->pos ? t->pos[a] : -1; return t->lab[a]; }
  if (a < t->ell + ne) { *pos = -1; return TFE_EIN_ELL_BASE + (a - t->ell) + 0; }
  *pos = t->pos ? t->pos[a - ne] : -1;
  return t->lab[a - ne];
}

/* Binds expression e to operand layouts (dims only are used). src is the expression string
 * for column numbers (NULL in the integer form). */
TFE_INTERNAL tfe_status tfe__ein_bind(const tfe__ein_expr *e, const char *src, int n,
                                      const tfe_layout *const *lay, tfe__ein_prob *p) {
  memset(p, 0, sizeof *p);
  if (n != e->n)
    return TFE_FAIL(TFE_ERR_INVALID, "the expression has %d operand%s but %d tensor%s given", e->n,
                    e->n == 1 ? "" : "s", n, n == 1 ? " was" : "s were");
  int E = 0;
  size_t total = 0;
  for (int k = 0; k < n; k++) {
    const tfe__ein_term *t = &e->t[k];
    int r = lay[k]->rank;
    if (r < 0 || r > TFE_MAX_RANK)
      return TFE_FAIL(TFE_ERR_RANK, "operand %d has rank %d outside [0, %d]", k, r, TFE_MAX_RANK);
    if (t->ell < 0 && r != t->nlab)
      return TFE_FAIL(TFE_ERR_RANK, "operand %d has rank %d but its term has %d label%s", k, r, t->nlab,
                      t->nlab == 1 ? "" : "s");
    if (t->ell >= 0 && r < t->nlab)
      return TFE_FAIL(TFE_ERR_RANK, "operand %d has rank %d but its term needs at least %d axes", k, r, t->nlab);
    if (t->ell >= 0 && r - t->nlab > E) E = r - t->nlab;
    total += (size_t)r;
  }
  /* Right-align ellipsis axes (numpy broadcasting): operand with ne axes uses E-ne..E-1. */
  int32_t *ids = (int32_t *)tfe__alloc((total + (size_t)E + 1) * sizeof(int32_t));
  if (!ids) return TFE_ERR_ALLOC;
  size_t m = 0;
  for (int k = 0; k < n; k++)
    for (int a = 0; a < lay[k]->rank; a++) {
      int32_t pos, l = tfe__ein_axis_label(&e->t[k], lay[k]->rank, a, &pos);
      if (l >= TFE_EIN_ELL_BASE && !e->int_labels) l += E - (lay[k]->rank - e->t[k].nlab);
      ids[m++] = l;
    }
  qsort(ids, m, sizeof *ids, tfe__ein_cmp_i32);
  int nl = 0;
  for (size_t i = 0; i < m; i++) if (nl == 0 || ids[nl - 1] != ids[i]) ids[nl++] = ids[i];
  /* Output labels as written (ellipsis expanded). */
  const tfe__ein_term *o = &e->out;
  int out_rank = 0;
  int32_t *olab = (int32_t *)tfe__alloc((size_t)(nl + E + (e->has_out ? o->nlab : 0) + 1) * sizeof(int32_t));
  int *count = (int *)tfe__calloc((size_t)nl + 1, sizeof(int));
  tfe_status st = TFE_OK;
  if (!olab || !count) { st = TFE_ERR_ALLOC; goto out; }
  for (int k = 0; k < n; k++)
    for (int a = 0; a < lay[k]->rank; a++) {
      int32_t pos, l = tfe__ein_axis_label(&e->t[k], lay[k]->rank, a, &pos);
      if (l >= TFE_EIN_ELL_BASE && !e->int_labels) l += E - (lay[k]->rank - e->t[k].nlab);
      count[tfe__ein_find(ids, nl, l)]++;
    }
  char b1[24];
  if (e->has_out) {
    if (o->ell < 0 && E > 0) {
      st = tfe__fail(TFE_ERR_INVALID, "tfe_einsum", "operands have %d ellipsis axes but the output has no '...'", E);
      goto out;
    }
    for (int a = 0; a < o->nlab + (o->ell >= 0 ? E : 0); a++) {
      int32_t pos, l = tfe__ein_axis_label(o, o->nlab + (o->ell >= 0 ? E : 0), a, &pos);
      int j = tfe__ein_find(ids, nl, l);
      if (j < 0) {
        st = tfe__ein_labfail(TFE_ERR_INVALID, e, src, pos, "output label %s appears in no input",
                              tfe__ein_labname(l, e->int_labels, b1));
        goto out;
      }
      for (int b = 0; b < out_rank; b++)
        if (olab[b] == l) {
          st = tfe__ein_labfail(TFE_ERR_INVALID, e, src, pos, "output label %s is repeated",
                                tfe__ein_labname(l, e->int_labels, b1));
          goto out;
        }
      olab[out_rank++] = l;
    }
  } else { /* numpy: ellipsis axes first, then labels seen exactly once, in label order */
    for (int k = 0; k < E; k++) olab[out_rank++] = TFE_EIN_ELL_BASE + k;
    for (int j = 0; j < nl; j++) if (count[j] == 1 && ids[j] < TFE_EIN_ELL_BASE) olab[out_rank++] = ids[j];
    if (e->int_labels) { /* integer labels never use the synthetic range: recompute */
      out_rank = 0;
      for (int j = 0; j < nl; j++) if (count[j] == 1) olab[out_rank++] = ids[j];
    }
  }
  if (out_rank > TFE_MAX_RANK) {
    st = TFE_FAIL(TFE_ERR_RANK, "output rank %d exceeds %d", out_rank, TFE_MAX_RANK);
    goto out;
  }
  /* One block for the problem. */
  size_t bytes = (size_t)nl * (sizeof(int32_t) + sizeof(int64_t)) + (size_t)n * (sizeof(int) * 2 + 2 * sizeof(int *)) +
                 2 * total * sizeof(int) + (size_t)out_rank * sizeof(int) + (size_t)e->ngroups * sizeof(int) + 128;
  char *mem = (char *)tfe__alloc(bytes);
  if (!mem) { st = TFE_ERR_ALLOC; goto out; }
  p->mem = mem; p->n = n; p->nlab = nl; p->int_labels = e->int_labels;
  p->size = (int64_t *)mem; mem += (size_t)nl * sizeof(int64_t);
  p->lab = (int **)mem; mem += (size_t)n * sizeof(int *);
  p->axis = (int **)mem; mem += (size_t)n * sizeof(int *);
  p->label_id = (int32_t *)mem; mem += (size_t)nl * sizeof(int32_t);
  p->rank = (int *)mem; mem += (size_t)n * sizeof(int);
  p->group = (int *)mem; mem += (size_t)n * sizeof(int);
  p->out_lab = (int *)mem; mem += (size_t)out_rank * sizeof(int);
  p->gparent = (int *)mem; mem += (size_t)e->ngroups * sizeof(int);
  int *axes = (int *)mem;
  memcpy(p->label_id, ids, (size_t)nl * sizeof(int32_t));
  p->ngroups = e->ngroups;
  memcpy(p->gparent, e->gparent, (size_t)e->ngroups * sizeof(int));
  /* Sizes: the largest size wins; others must equal it or be 1. */
  for (int j = 0; j < nl; j++) p->size[j] = -1;
  for (int k = 0; k < n; k++)
    for (int a = 0; a < lay[k]->rank; a++) {
      int32_t pos, l = tfe__ein_axis_label(&e->t[k], lay[k]->rank, a, &pos);
      if (l >= TFE_EIN_ELL_BASE && !e->int_labels) l += E - (lay[k]->rank - e->t[k].nlab);
      int j = tfe__ein_find(ids, nl, l);
      int64_t d = lay[k]->dims[a];
      if (d < 0) { st = TFE_FAIL(TFE_ERR_INVALID, "operand %d axis %d has negative size %lld", k, a, (long long)d); goto out; }
      if (p->size[j] < 0 || p->size[j] == 1) p->size[j] = d;
      else if (d != 1 && d != p->size[j]) {
        st = tfe__ein_labfail(TFE_ERR_SHAPE, e, src, pos, "label %s has size %lld in operand %d (axis %d) but %lld elsewhere",
                              tfe__ein_labname(l, e->int_labels, b1), (long long)d, k, a, (long long)p->size[j]);
        goto out;
      }
    }
  for (int k = 0; k < n; k++) {
    p->lab[k] = axes; axes += lay[k]->rank;
    p->axis[k] = axes; axes += lay[k]->rank;
    p->group[k] = e->t[k].group;
    int r = 0;
    for (int a = 0; a < lay[k]->rank; a++) {
      int32_t pos, l = tfe__ein_axis_label(&e->t[k], lay[k]->rank, a, &pos);
      if (l >= TFE_EIN_ELL_BASE && !e->int_labels) l += E - (lay[k]->rank - e->t[k].nlab);
      int j = tfe__ein_find(ids, nl, l);
      if (lay[k]->dims[a] == 1 && p->size[j] != 1) continue; /* broadcast axis */
      p->lab[k][r] = j; p->axis[k][r] = a; r++;
    }
    p->rank[k] = r;
  }
  p->out_rank = out_rank;
  for (int b = 0; b < out_rank; b++) p->out_lab[b] = tfe__ein_find(ids, nl, olab[b]);
out:
  tfe__free(ids); tfe__free(olab); tfe__free(count);
  if (st != TFE_OK) tfe__ein_prob_free(p);
  return st;
}
#endif
