/* tenferro/kernel/units.h — copies whose leading run is common to both operands and short
 * (r elements contiguous in the destination and the source, r * es at most
 * copy_unit_run_bytes, 255 by default): each run is copied as one unit of r * es bytes, and the copy is planned
 * over the remaining dims as a copy of such units (kind-independent: units are bytes).
 *
 * Why: planned element by element, such a copy of a 1- or 2-byte kind is a gather tile whose
 * G0 table holds 256 elements, about 50 runs, so each tile wrote a hundred or more destination
 * columns of 250 bytes far apart (u8 [5,36,4,44,10,14,34] perm [0,4,5,1,3,6,2]: 7-8x memcpy,
 * docs/bench-kernel.md sessions 19 and 21). Planned over units, G0 holds up to 256 runs and
 * the tile is an ordinary transpose of units. Internal only (bodies phase). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_UNITS_H
#define TENFERRO_KERNEL_UNITS_H
#include <tenferro/config.h>

#endif
#elif !defined(TENFERRO_KERNEL_UNITS_BODY) /* bodies */
#define TENFERRO_KERNEL_UNITS_BODY
#include <string.h>

/* Plan of a copy (plan p, op 0 written, op 1 read) as a copy of units when p's leading dim is a
 * short run common to both (stride 1 in both, 2 or more elements, at most copy_unit_run_bytes)
 * and the copy transposes (gather or transpose tiles). The unit plan *u is built over p's
 * other dims with strides in units (each a multiple of r: otherwise false, p stays), then
 * scaled back to elements, so that its offsets, steps and tables are element offsets as in any
 * plan; u->unit = r. tb: copy_unit_tile_bytes (G1 spans tb bytes, G0 2 tb). */
TFE_INTERNAL bool tfe__kplan_units(tfe__kplan *u, const tfe__kplan *p, int64_t tb) {
  const int64_t maxb = tfe__st.tune.copy_unit_run_bytes, r = p->rank ? p->dims[0] : 0, ub = r * p->es;
  /* (a run the source reads backwards: units turned round in place after their copy, tfe__krev_units) */
  const bool rev = p->rank && p->str[1][0] == -1 && tfe__st.tune.copy_reverse_runs && TFE__KHAVE_TR8 && tfe__ksimd() &&
                   p->es <= 16 && !(p->es & (p->es - 1)) && ub <= 256;
  /* (copies without a transpose too where G0 reads the runs through a table of 64 runs or
   * fewer, of 1- or 2-byte kinds, copy_unit_flips: u8 [33,36r,72064], 33-byte runs in reverse
   * order, took tiles of 31 runs (1 KiB), a table entry an element. Shorter runs, and those of
   * larger kinds, whose tiles were 4-16 KiB, kept their tiles: as units f32 [7,11r,...] ran at
   * 0.61-0.96 of their time, f64 [6,4r,...] 0.76, f32 [8,2,10r,...] 0.85) */
  const bool flips = !p->gather && p->g[1].nd == 0 && p->g[0].nd > 1 && !p->g[0].arith[1] && tfe__st.tune.copy_unit_flips &&
                     p->es <= 2 && r * 64 >= tfe__st.tune.copy_run_table_entries;
  if (!p->copy || p->nops != 2 || p->key != 0 || maxb <= 0 || p->rank < 2 || r < 2 || ub > maxb ||
      p->str[0][0] != 1 || (p->str[1][0] != 1 && !rev) || (!p->gather && p->g[1].nd == 0 && !flips))
    return false;
  /* f64 gather tiles move runs of 5-8 by vector gathers of 8 already: on an Intel Xeon they
   * beat units of 40-64 bytes (B/A 1.20-1.37 on four cases; 0.52-0.80 on the Zen 3) */
  if (ub > 32 && p->gather && p->es == 8) return false;
  int64_t dims[TFE_MAX_RANK], str[2][TFE_MAX_RANK], off[2] = {0, 0};
  for (int d = 1; d < p->rank; d++) {
    dims[d - 1] = p->dims[d];
    for (int o = 0; o < 2; o++) {
      if (p->str[o][d] % r) return false;
      str[o][d - 1] = p->str[o][d] / r;
    }
  }
  const int64_t *sp[2] = {str[0], str[1]};
  const int64_t tt = tb / ub < 8 ? 8 : tb / ub;
  if (!tfe__kplan_make(u, 2, 0, p->rank - 1, dims, sp, off, 65536 / ub + 1, 2 * tt, tt, 0, false, ub, TFE__KCOPY_UNITS)) return false;
  /* back to elements: every offset times r, from p's origin */
  for (int o = 0; o < 2; o++) {
    u->base[o] = p->base[o] + r * u->base[o];
    for (int d = 0; d < u->rank; d++) u->str[o][d] *= r;
    for (int gi = 0; gi < 2; gi++) {
      tfe__kgroup *g = &u->g[gi];
      g->step[o] *= r;
      if (g->nd > 1) for (int64_t e = 0; e < g->len; e++) g->tab[o][e] *= r; /* (filled for every op) */
    }
    for (int q = 0; q < u->no; q++) u->ostep[o][q] *= r;
  }
  if (rev) u->base[1] -= r - 1; /* (each unit from its lowest source element) */
  if (flips) TFE__KSTAT(84);
  u->unit = r;
  u->urev = rev;
  u->es = p->es;
  u->numel = p->numel;
  return true;
}

/* Whether layout l covers its elements densely in some order of its dims (strides 1, d0, d0 d1,
 * ... after sorting; dims of 1 ignored). */
TFE_INTERNAL bool tfe__kdense_any(const tfe_layout *l) {
  int64_t s = 1;
  unsigned used = 0;
  for (int k = 0; k < l->rank; k++) {
    if (l->dims[k] == 1) { used |= 1u << k; continue; }
    int i = 0;
    while (i < l->rank && ((used >> i & 1) || l->dims[i] == 1 || l->strides[i] != s)) i++;
    if (i == l->rank) return false;
    used |= 1u << i;
    s *= l->dims[i];
  }
  return true;
}
/* Copy one unit of a size class: `ub` bytes from s to d, ub in the class's range, by at most
 * two loads and two stores of a fixed width of up to 64 bytes (overlapping inside the unit:
 * nothing outside it is read or written). */
#define TFE__KU_W(w, d, s) do { char t_[w]; memcpy(t_, (s), w); memcpy((d), t_, w); } while (0)
#define TFE__KU_PAIR(w, d, s, ub) do { \
    char a_[w], b_[w]; \
    memcpy(a_, (s), w); memcpy(b_, (s) + (ub) - w, w); \
    memcpy((d), a_, w); memcpy((d) + (ub) - w, b_, w); \
  } while (0)
#define TFE__KU_C2(d, s, ub) TFE__KU_W(2, d, s)
#define TFE__KU_C3(d, s, ub) TFE__KU_PAIR(2, d, s, ub)
#define TFE__KU_C4(d, s, ub) TFE__KU_W(4, d, s)
#define TFE__KU_C7(d, s, ub) TFE__KU_PAIR(4, d, s, ub)
#define TFE__KU_C8(d, s, ub) TFE__KU_W(8, d, s)
#define TFE__KU_C15(d, s, ub) TFE__KU_PAIR(8, d, s, ub)
#define TFE__KU_C16(d, s, ub) TFE__KU_W(16, d, s)
#define TFE__KU_C32(d, s, ub) TFE__KU_PAIR(16, d, s, ub)
#define TFE__KU_C64(d, s, ub) TFE__KU_PAIR(32, d, s, ub)
#define TFE__KU_C128(d, s, ub) TFE__KU_PAIR(64, d, s, ub)
/* longer units: whole 64-byte pieces, the last one overlapping the one before */
#define TFE__KU_CN(d, s, ub) do { \
    int64_t o_ = 0; \
    for (; o_ + 64 < (ub); o_ += 64) TFE__KU_W(64, (d) + o_, (s) + o_); \
    TFE__KU_W(64, (d) + (ub) - 64, (s) + (ub) - 64); \
  } while (0)

/* n units of a size class from source entries (st ? st[i] : i * ss) to destination entries
 * (dt ? dt[i] : i * ds): tables in elements of es bytes, steps in bytes. One function per
 * class, so that the unit copy is inlined. */
typedef void (*tfe__kunit_col_fn)(char *dc, const int64_t *dt, int64_t ds, const char *sc, const int64_t *st,
                                  int64_t ss, int64_t n, int64_t es, int64_t ub);
#define TFE__KU_COL(cls) \
  TFE_INTERNAL void tfe__kunit_col##cls(char *dc, const int64_t *dt, int64_t ds, const char *sc, const int64_t *st, \
                                         int64_t ss, int64_t n, int64_t es, int64_t ub) { \
    (void)ub; \
    if (!dt && !st) for (int64_t i = 0; i < n; i++) TFE__KU_C##cls(dc + i * ds, sc + i * ss, ub); \
    else if (!dt) for (int64_t i = 0; i < n; i++) TFE__KU_C##cls(dc + i * ds, sc + st[i] * es, ub); \
    else for (int64_t i = 0; i < n; i++) TFE__KU_C##cls(dc + dt[i] * es, sc + (st ? st[i] * es : i * ss), ub); \
  }
TFE__KU_COL(2)
TFE__KU_COL(3)
TFE__KU_COL(4)
TFE__KU_COL(7)
TFE__KU_COL(8)
TFE__KU_COL(15)
TFE__KU_COL(16)
TFE__KU_COL(32)
TFE__KU_COL(64)
TFE__KU_COL(128)
TFE__KU_COL(N)
#undef TFE__KU_COL

TFE_INTERNAL tfe__kunit_col_fn tfe__kunit_col_for(int64_t ub) {
  return ub == 2 ? tfe__kunit_col2 : ub == 3 ? tfe__kunit_col3 : ub == 4 ? tfe__kunit_col4 : ub < 8 ? tfe__kunit_col7
       : ub == 8 ? tfe__kunit_col8 : ub < 16 ? tfe__kunit_col15 : ub == 16 ? tfe__kunit_col16 : ub <= 32 ? tfe__kunit_col32
       : ub <= 64 ? tfe__kunit_col64 : ub <= 128 ? tfe__kunit_col128 : tfe__kunit_colN;
}

/* Bytes of the per-thread buffer of unit plan u's tiles (tfe__kunit_run_tile): G0's columns of
 * units, each padded by a line, for every G1 entry. */
TFE_INTERNAL int64_t tfe__kunit_buf_bytes(const tfe__kplan *u, int64_t es) {
  return (u->g[0].len * u->unit * es + 64) * u->g[1].len;
}

#if TFE__KHAVE_TR8
/* Turn round the elements of n units copied as they lay (tfe__krev_units' arguments): units
 * that follow one another, a register of them at a time (rix, rw: tfe__krev_recs_prep's permute
 * for records of r elements; 0: none); else unit by unit (one call a unit made the reversed
 * units 3.7x slower than the same copy's units as they lie: docs/bench-kernel.md, session 46). */
TFE_INTERNAL void tfe__kunit_rev_col(char *p, const int64_t *tab, int64_t step, int64_t n, int64_t es, int64_t ub, int64_t r,
                                     const uint8_t *rix, int rw) {
  if (rw && !tab && step == ub) tfe__kcopy_rev_recs(p, p, r, n, (size_t)es, rix, rw, false);
  else tfe__krev_units(p, tab, step, n, es, ub);
}
#endif

/* A unit plan's plain block (G1 empty: copy_unit_flips), n0 units through the buffer: read
 * 16 at a time through G0's table, each asked for 32 units ahead (the runs of a flip are read
 * downwards within each block, which the hardware prefetchers did not follow: f64 [4,22r,100352]
 * 15.0 -> 11.0 ms; 16-256 units ahead, into L1 or L2, measured both ways by case, 32 the best
 * compromise, docs/bench-kernel.md session 46), and every 64 units the destination's whole
 * lines filled so far go out (streamed where nt), so that the next units' reads overlap the
 * writes (a whole tile filled, then written out, left the memory idle in turn). */
TFE_INTERNAL void tfe__kunit_run_col(const tfe__kplan *u, char *d, const char *s, int64_t n0, int64_t es, char *buf, bool nt,
                                     const uint8_t *rix, int rw) {
  const tfe__kgroup *g0 = &u->g[0];
  const int64_t ub = u->unit * es, *st = g0->arith[1] ? NULL : g0->tab[1], ss = g0->step[1] * es;
  const tfe__kunit_col_fn col = tfe__kunit_col_for(ub);
  int64_t out = 0; /* (bytes gone out) */
  (void)rix; (void)rw;
  for (int64_t i = 0; i < n0; i += 16) {
    const int64_t e = i + 16 < n0 ? i + 16 : n0;
    for (int64_t k = i + 32; k < e + 32 && k < n0; k++) __builtin_prefetch(s + (st ? st[k] * es : k * ss), 0, 3);
    col(buf + i * ub, NULL, ub, st ? s : s + i * ss, st ? st + i : NULL, ss, e - i, es, ub);
#if TFE__KHAVE_TR8
    if (u->urev) tfe__kunit_rev_col(buf + i * ub, NULL, ub, e - i, es, ub, u->unit, rix, rw);
#endif
    if (e % 64 && e < n0) continue;
    int64_t upto = e * ub;
    if (e < n0) upto = (int64_t)(((uintptr_t)d + (uintptr_t)upto) & ~(uintptr_t)63) - (int64_t)(uintptr_t)d; /* (whole lines) */
    if (upto <= out) continue;
    if (nt) tfe__kstream(d + out, buf + out, (size_t)(upto - out));
    else memcpy(d + out, buf + out, (size_t)(upto - out));
    out = upto;
  }
}

/* Tile t of unit plan u (d and s: the operands' data, elements of es bytes): for each of its
 * n1 columns (G1 entries), the n0 units of G0, written in destination order, read from n0
 * source rows. With buf (outputs whose G0 runs along the destination: see k_copy_units_),
 * the columns go to the buffer first and then out to the destination (nt: by streaming
 * stores), columns adjacent there as one run: stored in place, each line of the
 * destination was read before it was written, and the tile's many columns (each a stream) kept
 * more lines in flight than the core tracks. */
TFE_INTERNAL void tfe__kunit_run_tile(const tfe__kplan *u, char *d, const char *s, const tfe__ktile *t, int64_t es,
                                      char *buf, bool nt, const uint8_t *rix, int rw) {
  const tfe__kgroup *g0 = &u->g[0];
  const int64_t ub = u->unit * es, n0 = t->n0, n1 = t->n1;
  const tfe__kunit_col_fn col = tfe__kunit_col_for(ub);
  const int64_t *dt = g0->arith[0] ? NULL : g0->tab[0], *st = g0->arith[1] ? NULL : g0->tab[1];
  const int64_t ds = g0->step[0] * es, ss = g0->step[1] * es;
  d += t->off[0] * es;
  s += t->off[1] * es;
  if (!buf) {
    for (int64_t j = 0; j < n1; j++) {
      col(d + TFE__KOFF(u, 1, 0, j) * es, dt, ds, s + TFE__KOFF(u, 1, 1, j) * es, st, ss, n0, es, ub);
#if TFE__KHAVE_TR8
      if (u->urev) tfe__kunit_rev_col(d + TFE__KOFF(u, 1, 0, j) * es, dt, ds, n0, es, ub, u->unit, rix, rw);
#endif
    }
    return;
  }
  if (n1 == 1) {
    tfe__kunit_run_col(u, d + TFE__KOFF(u, 1, 0, 0) * es, s + TFE__KOFF(u, 1, 1, 0) * es, n0, es, buf, nt, rix, rw);
    return;
  }
  const bool runs = n1 > 1 && TFE__KOFF(u, 1, 0, 1) == TFE__KOFF(u, 1, 0, 0) + n0 * u->unit;
  const int64_t lb = runs ? n0 * ub : n0 * ub + 64; /* (padded: columns of a power of two share L1 sets) */
  /* filled row by row: the tile's source rows read in address order */
  const tfe__kgroup *g1 = &u->g[1];
  const int64_t *st1 = g1->arith[1] ? NULL : g1->tab[1], ss1 = g1->step[1] * es;
  /* each source row prefetched where the next tile reads it (one step of the odometer's first
   * dim): tiles stepped along the source then find their rows' continuations on the way, as no
   * hardware prefetcher follows a hundred rows. Rows of G1 one unit step (either way) line by
   * line; rows through G1's table (runs of units in a few places) every line's worth of units */
  const int64_t pf = tfe__st.tune.copy_unit_prefetch && u->no ? u->ostep[1][0] * es : 0;
  const bool pfrow = pf && !st1 && (ss1 == ub || ss1 == -ub), pftab = pf && st1 && tfe__st.tune.copy_unit_prefetch > 1;
  const int64_t lo = ss1 < 0 ? (n1 - 1) * ss1 : 0, jl = 64 / ub > 1 ? 64 / ub : 1; /* (a reversed row's lowest unit) */
  for (int64_t i = 0; i < n0; i++) {
    const char *sr = s + (st ? st[i] * es : i * ss);
    col(buf + i * ub, NULL, lb, sr, st1, ss1, n1, es, ub);
    const uintptr_t a = (uintptr_t)sr + (uintptr_t)pf; /* (addresses only: perhaps past the source) */
    if (pfrow) for (int64_t b = 0; b < n1 * ub; b += 64) __builtin_prefetch((const void *)(a + (uintptr_t)(lo + b)), 0, 3);
    if (pftab) for (int64_t j = 0; j < n1; j += jl) __builtin_prefetch((const void *)(a + (uintptr_t)(st1[j] * es)), 0, 3);
  }
#if TFE__KHAVE_TR8
  if (u->urev && runs) tfe__kunit_rev_col(buf, NULL, ub, n1 * n0, es, ub, u->unit, rix, rw);
  else if (u->urev) for (int64_t j = 0; j < n1; j++) tfe__kunit_rev_col(buf + j * lb, NULL, ub, n0, es, ub, u->unit, rix, rw);
#endif
  for (int64_t q = 0, k; q < n1; q = k) {
    const int64_t dj = TFE__KOFF(u, 1, 0, q);
    for (k = q + 1; runs && k < n1 && TFE__KOFF(u, 1, 0, k) == dj + (k - q) * n0 * u->unit;) k++;
    if (nt) tfe__kstream(d + dj * es, buf + q * lb, (size_t)((k - q) * n0 * ub));
    else memcpy(d + dj * es, buf + q * lb, (size_t)((k - q) * n0 * ub));
  }
}
#endif
