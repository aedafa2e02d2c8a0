/* tfe-einsum — contract a tensor network from the command line.
 *
 *   tfe-einsum EXPR A.npy B.npy ... -o OUT.npy [options]
 *   tfe-einsum --instance FILE.json [options]      seeded random inputs
 *
 * Options: --path greedy|dp|anneal|auto|instance:opt_flops|instance:opt_size
 *          --dtype f32|f64|c64|c128   --algebra standard|maxplus|minplus|maxtimes
 *          --threads N  --repeat K  --memory-limit BYTES  --time-budget SECONDS
 *          --seed N  --colmajor  --print-path  --max-time SECONDS  --warmup  --profile[-layouts]
 * One summary line on stdout, printed once everything (the output file included) succeeded;
 * errors are one line on stderr and exit status 1 (usage: 2). Files are written whole or not
 * at all (a temporary file renamed into place). Every size is computed with overflow checks. */
#include <tenferro.h>
#include <errno.h>
#include <limits.h>

typedef struct args {
  const char *expr, *out, *instance, *path, *dtype, *algebra, *save_inputs;
  const char *inputs[1024];
  int ninputs, threads, repeat;
  int64_t memory_limit;
  double budget, max_time, write_weight;
  uint64_t seed;
  bool colmajor, print_path, plan_only, warmup, profile, profile_layouts;
} args;

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tfe-einsum: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return code;
}
static bool parse_i64(const char *s, int64_t lo, int64_t *v) {
  char *e;
  errno = 0;
  long long x = strtoll(s, &e, 10);
  if (errno || e == s || *e || x < lo) return false;
  *v = x;
  return true;
}

/* A finite number in [lo, hi] (strtod also takes "inf" and "nan": refused here). */
static bool parse_num(const char *s, double lo, double hi, double *v) {
  char *e;
  errno = 0;
  double x = strtod(s, &e);
  if (errno || e == s || *e || !isfinite(x) || x < lo || x > hi) return false;
  *v = x;
  return true;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->threads = 1; a->repeat = 1; a->path = "auto"; a->algebra = "standard"; a->budget = 1.5; a->seed = 42;
  a->write_weight = -1; /* not given: the library's default */
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    bool has_val = i + 1 < argc;
    int64_t v;
#define NEED_VAL() do { if (!has_val) return fail(2, "option %s needs a value", s); } while (0)
    if (!strcmp(s, "-o") || !strcmp(s, "--output")) { NEED_VAL(); a->out = argv[++i]; }
    else if (!strcmp(s, "--instance")) { NEED_VAL(); a->instance = argv[++i]; }
    else if (!strcmp(s, "--path")) { NEED_VAL(); a->path = argv[++i]; }
    else if (!strcmp(s, "--dtype")) { NEED_VAL(); a->dtype = argv[++i]; }
    else if (!strcmp(s, "--algebra")) { NEED_VAL(); a->algebra = argv[++i]; }
    else if (!strcmp(s, "--threads")) { NEED_VAL(); if (!parse_i64(argv[++i], 1, &v) || v > 1024) return fail(2, "--threads wants a positive integer, got '%s'", argv[i]); a->threads = (int)v; }
    else if (!strcmp(s, "--repeat")) { NEED_VAL(); if (!parse_i64(argv[++i], 1, &v) || v > 100000) return fail(2, "--repeat wants a positive integer, got '%s'", argv[i]); a->repeat = (int)v; }
    else if (!strcmp(s, "--memory-limit")) { NEED_VAL(); if (!parse_i64(argv[++i], 1, &v)) return fail(2, "--memory-limit wants a byte count, got '%s'", argv[i]); a->memory_limit = v; }
    else if (!strcmp(s, "--seed")) { NEED_VAL(); if (!parse_i64(argv[++i], 0, &v)) return fail(2, "--seed wants a non-negative integer, got '%s'", argv[i]); a->seed = (uint64_t)v; }
    else if (!strcmp(s, "--time-budget")) {
      NEED_VAL();
      if (!parse_num(argv[++i], 0, 86400, &a->budget))
        return fail(2, "--time-budget wants finite seconds in [0, 86400], got '%s'", argv[i]);
    }
    else if (!strcmp(s, "--write-weight")) {
      NEED_VAL();
      if (!parse_num(argv[++i], 0, 1e300, &a->write_weight))
        return fail(2, "--write-weight wants a non-negative number (finite), got '%s'", argv[i]);
    }
    else if (!strcmp(s, "--max-time")) {
      NEED_VAL();
      if (!parse_num(argv[++i], 0, 1e9, &a->max_time)) return fail(2, "--max-time wants finite seconds, got '%s'", argv[i]);
    }
    else if (!strcmp(s, "--warmup")) a->warmup = true;
    else if (!strcmp(s, "--profile")) a->profile = true;
    else if (!strcmp(s, "--profile-layouts")) a->profile = a->profile_layouts = true;
    else if (!strcmp(s, "--colmajor")) a->colmajor = true;
    else if (!strcmp(s, "--print-path")) a->print_path = true;
    else if (!strcmp(s, "--plan-only")) a->plan_only = true;
    else if (!strcmp(s, "--save-inputs")) { NEED_VAL(); a->save_inputs = argv[++i]; }
    else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      puts("usage: tfe-einsum EXPR A.npy ... -o OUT.npy [options] | tfe-einsum --instance FILE.json [options]\n"
           "  --path greedy|dp|anneal|auto|instance:opt_flops|instance:opt_size  --dtype f32|f64|c64|c128\n"
           "  --algebra standard|maxplus|minplus|maxtimes  --threads N  --repeat K  --memory-limit BYTES\n"
           "  --write-weight W (cost of one intermediate element written, in multiply-adds; 0: flops only)\n"
           "  --time-budget SECONDS (anneal/auto planning)  --seed N  --colmajor  --print-path\n"
           "  --max-time SECONDS (stop repeating once the timed runs took this long; at least one run)\n"
           "  --profile (per-step table of the timed runs on stderr: time, multiply-adds, rate)\n"
           "  --profile-layouts (the same, with each step's views: label:dim/stride)\n"
           "  --warmup (one untimed run first; counted as timed when it takes 1 s or more)\n"
           "  --plan-only (plan and print the path, do not contract)  --save-inputs DIR (DIR/in<k>.npy)");
      exit(0);
    }
    else if (s[0] == '-' && s[1]) return fail(2, "unknown option '%s' (see --help)", s);
    else if (!a->expr && !a->instance) a->expr = s;
    else if (a->ninputs < 1024) a->inputs[a->ninputs++] = s;
    else return fail(2, "too many inputs");
#undef NEED_VAL
  }
  if (!a->instance && !a->expr) return fail(2, "no expression given (usage: tfe-einsum EXPR A.npy ... -o OUT.npy, or --instance FILE.json)");
  if (a->instance && (a->expr || a->ninputs)) return fail(2, "--instance takes no expression or input files");
  if (!a->instance && !a->out) return fail(2, "no output file given (-o OUT.npy)");
  if (!a->instance && !strncmp(a->path, "instance:", 9)) return fail(2, "--path %s needs --instance", a->path);
  return 0;
}

/* The element kind from --dtype and --algebra. */
static int pick_kind(const char *dtype, const char *algebra, tfe_dtype *dt) {
  static const char *algs[] = {"standard", "maxplus", "minplus", "maxtimes"};
  int alg = -1;
  for (int i = 0; i < 4; i++) if (!strcmp(algebra, algs[i])) alg = i;
  if (alg < 0) return fail(2, "unknown algebra '%s' (standard, maxplus, minplus, maxtimes)", algebra);
  tfe_dtype base = tfe_dtype_from_name(dtype);
  if (base != TFE_DT_F32 && base != TFE_DT_F64 && base != TFE_DT_C64 && base != TFE_DT_C128)
    return fail(2, "unknown dtype '%s' (f32, f64, c64, c128)", dtype);
  if (alg == 0) { *dt = base; return 0; }
  if (base == TFE_DT_C64 || base == TFE_DT_C128) return fail(2, "the %s algebra needs a real dtype (f32 or f64), not %s", algebra, dtype);
  char name[32];
  snprintf(name, sizeof name, "%s_%s", algs[alg], dtype);
  *dt = tfe_dtype_from_name(name);
  return 0;
}

/* ---- --profile: per-step times summed over the timed runs ---------------------------------------- */
typedef struct prof_row { double sec, flops, out; const char *what; int ra, rb, rc; long runs; char *lays; } prof_row;
typedef struct prof_t { prof_row *row; int nsteps, npre; bool on, lays; } prof_t;
/* "lab:dim/stride ..." of one view into buf (labels are the plan's dense ids). */
static size_t prof_lay(char *buf, size_t cap, const char *name, const tfe_layout *L, const int32_t *lab) {
  size_t n = (size_t)snprintf(buf, cap, "%s[", name);
  for (int i = 0; L && i < L->rank && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%d:%lld/%lld", i ? " " : "", (int)lab[i], (long long)L->dims[i],
                          (long long)L->strides[i]);
  if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "] ");
  return n < cap ? n : cap;
}
static char *prof_lays(const tfe_einsum_step_info *in) {
  size_t cap = 4096, n = 0;
  char *b = (char *)malloc(cap);
  if (!b) return NULL;
  n += prof_lay(b + n, cap - n, "A", in->lay_a, in->lab_a);
  if (in->lay_b) n += prof_lay(b + n, cap - n, "B", in->lay_b, in->lab_b);
  prof_lay(b + n, cap - n, "C", in->lay_c, in->lab_c);
  return b;
}
static void prof_hook(void *ctx, const tfe_einsum_step_info *in) {
  prof_t *pf = (prof_t *)ctx;
  if (!pf->on) return;
  int r = in->step >= 0 ? pf->npre + in->step : -1 - in->step;
  if (r < 0 || r >= pf->npre + pf->nsteps) return;
  prof_row *w = &pf->row[r];
  w->sec += in->seconds; w->what = in->what; w->ra = in->rank_a; w->rb = in->rank_b; w->rc = in->rank_c;
  if (in->slice == 0) { w->runs++; w->flops = in->flops; w->out = in->out_elems; }
  if (pf->lays && !w->lays) w->lays = prof_lays(in);
}
/* Steps by time, slowest first, until 99% of the total (at least 10 rows). */
static int prof_cmp(const void *x, const void *y) {
  double a = ((const prof_row *)x)->sec, b = ((const prof_row *)y)->sec;
  return (a < b) - (a > b);
}
static void prof_print(prof_t *pf) {
  int n = pf->npre + pf->nsteps;
  double tot = 0;
  for (int r = 0; r < n; r++) tot += pf->row[r].sec;
  long runs = n ? pf->row[n - 1].runs : 0;
  if (runs <= 0 || tot <= 0) return;
  for (int r = 0; r < n; r++) pf->row[r].rc = pf->row[r].rc * 100000 + r; /* keep the index through the sort */
  qsort(pf->row, (size_t)n, sizeof *pf->row, prof_cmp);
  fprintf(stderr, "profile: mean of %ld timed run(s): %.3f ms per run in %d steps (%d leaf reductions)\n", runs,
          1e3 * tot / (double)runs, n, pf->npre);
  fprintf(stderr, "%6s %-8s %5s %10s %7s %12s %12s %9s\n", "step", "what", "ranks", "ms/run", "share", "madds", "out_elems",
          "GFLOP/s");
  double cum = 0;
  for (int r = 0; r < n && (r < 10 || cum < 0.99 * tot); r++) {
    prof_row *w = &pf->row[r];
    int idx = w->rc % 100000, rc = w->rc / 100000;
    double ms = 1e3 * w->sec / (double)runs;
    char ranks[32];
    snprintf(ranks, sizeof ranks, "%d%s%d>%d", w->ra, w->rb ? "," : "", w->rb, rc);
    if (!w->rb) snprintf(ranks, sizeof ranks, "%d>%d", w->ra, rc);
    fprintf(stderr, "%6d %-8s %5s %10.3f %6.1f%% %12.4g %12.4g %9.2f\n", idx - pf->npre, w->what ? w->what : "?", ranks, ms,
            100 * w->sec / tot, w->flops, w->out, ms > 0 ? 2e-6 * w->flops / ms : 0);
    if (w->lays) fprintf(stderr, "       %s\n", w->lays);
    cum += w->sec;
  }
}

/* ---- per-kind execution and checksums ----------------------------------------------------------- */
static prof_t *g_prof; /* on during timed runs only */
static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

#define RUN_KIND(s, T, R, alg, cplx, flt, DT)                                                           \
  static tfe_status run_##s(const tfe_einsum_plan *p, int n, const tfe_dyn *in, tfe_dyn *out, int *repeat, \
                            double max_ms, bool warmup, double *ms, double *sum) {                                    \
    tfe_view_##s *v = (tfe_view_##s *)calloc((size_t)n + 1, sizeof *v);                                 \
    if (!v) return TFE_ERR_ALLOC;                                                                        \
    for (int k = 0; k < n; k++) { v[k].data = (T *)in[k].data; v[k].lay = in[k].lay; v[k].conj = false; } \
    tfe_view_##s o = {(T *)out->data, out->lay, false};                                                  \
    tfe_status st = TFE_OK;                                                                              \
    double spent = 0;                                                                                    \
    int r = 0;                                                                                           \
    if (warmup) { /* untimed, unless it takes a second or more (the peers' rule) */                      \
      double t0 = tfe__now();                                                                            \
      st = tfe_einsum_execute_##s(p, tfe_sr_one_##s(), v, tfe_sr_zero_##s(), &o);                        \
      double w = 1e3 * (tfe__now() - t0);                                                                \
      if (w >= 1000) { ms[r++] = w; spent = w; }                                                         \
    }                                                                                                    \
    if (g_prof) g_prof->on = true;                                                                       \
    for (; r < *repeat && st == TFE_OK && (r == 0 || spent < max_ms); r++) {                             \
      double t0 = tfe__now();                                                                            \
      st = tfe_einsum_execute_##s(p, tfe_sr_one_##s(), v, tfe_sr_zero_##s(), &o);                        \
      ms[r] = 1e3 * (tfe__now() - t0);                                                                   \
      spent += ms[r];                                                                                    \
    }                                                                                                    \
    *repeat = r;                                                                                         \
    if (g_prof) g_prof->on = false;                                                                      \
    free(v);                                                                                             \
    int64_t cnt = tfe_layout_numel(&out->lay);                                                           \
    double acc = 0;                                                                                      \
    for (int64_t e = 0; e < cnt; e++) {                                                                  \
      R parts[2] = {0, 0};                                                                               \
      memcpy(parts, (const T *)out->data + e, sizeof(T));                                                \
      acc += (double)parts[0] + (cplx ? (double)parts[1] : 0.0);                                         \
    }                                                                                                    \
    *sum = acc;                                                                                          \
    return st;                                                                                           \
  }
TFE_KINDS(RUN_KIND)
#undef RUN_KIND

static tfe_status run_any(tfe_dtype dt, const tfe_einsum_plan *p, int n, const tfe_dyn *in, tfe_dyn *out, int *repeat,
                          double max_ms, bool warmup, double *ms, double *sum) {
  switch (dt) {
#define CASE(s, T, R, alg, cplx, flt, DT) case DT: return run_##s(p, n, in, out, repeat, max_ms, warmup, ms, sum);
    TFE_KINDS(CASE)
#undef CASE
    default: return TFE_FAIL(TFE_ERR_DTYPE, "unsupported dtype");
  }
}

/* ---- inputs ---------------------------------------------------------------------------------------- */
typedef struct problem {
  char name[256];
  char *expr;
  int n;
  tfe_dyn *in;
  tfe_json doc;
  int root;
} problem;

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}
static uint64_t rng_next(uint64_t *s) { *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27; return *s * 2685821657736338717ULL; }

/* Reads a whole file into a NUL-terminated buffer; NULL with errno set on failure (a
 * directory fails with EISDIR at the first read). */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = (char *)malloc(cap);
  errno = 0;
  for (size_t got; b && (got = fread(b + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (n + 1 < cap) continue;
    char *nb = cap <= SIZE_MAX / 2 ? (char *)realloc(b, cap *= 2) : NULL;
    if (!nb) { free(b); b = NULL; errno = ENOMEM; } else b = nb;
  }
  int e = errno;
  if (b && ferror(f)) { free(b); b = NULL; if (!e) e = EIO; }
  fclose(f);
  errno = e;
  if (b) b[n] = 0;
  *len = n;
  return b;
}

/* Random inputs for a benchmark instance, wrapped row-major (or column-major with --colmajor). */
static int load_instance(const args *a, tfe_dtype dt, problem *pr) {
  size_t len;
  char *text = slurp(a->instance, &len);
  if (!text) return fail(1, "cannot read instance '%s': %s", a->instance, strerror(errno));
  if (memchr(text, 0, len)) { free(text); return fail(1, "instance '%s' is not text (it holds a NUL byte)", a->instance); }
  tfe_status st = tfe_json_parse(text, len, &pr->doc);
  free(text);
  if (st != TFE_OK) return fail(1, "instance '%s': %s", a->instance, tfe_last_error());
  const tfe_json *j = &pr->doc;
  int fs = tfe_json_get(j, 0, a->colmajor ? "format_string_colmajor" : "format_string");
  int sh = tfe_json_get(j, 0, a->colmajor ? "shapes_colmajor" : "shapes");
  int nm = tfe_json_get(j, 0, "name");
  if (fs < 0 || j->nodes[fs].type != TFE_JSON_STRING || sh < 0 || j->nodes[sh].type != TFE_JSON_ARRAY)
    return fail(1, "instance '%s' lacks %s / %s", a->instance, a->colmajor ? "format_string_colmajor" : "format_string",
                a->colmajor ? "shapes_colmajor" : "shapes");
  snprintf(pr->name, sizeof pr->name, "%s", nm >= 0 && j->nodes[nm].type == TFE_JSON_STRING ? j->nodes[nm].str : a->instance);
  if (strlen(j->nodes[fs].str) != j->nodes[fs].len)
    return fail(1, "instance '%s': the expression holds a NUL character (\\u0000)", a->instance);
  pr->expr = dupstr(j->nodes[fs].str);
  pr->n = j->nodes[sh].count;
  pr->in = (tfe_dyn *)calloc((size_t)pr->n + 1, sizeof(tfe_dyn));
  if (!pr->expr || !pr->in) return fail(1, "out of memory");
  const tfe_dtype_info *di = tfe_dtype_get(dt);
  uint64_t rs = a->seed * 0x9E3779B97F4A7C15ULL + 12345;
  int k = 0;
  for (int s = j->nodes[sh].first; s >= 0; s = j->nodes[s].next, k++) {
    int64_t dims[TFE_MAX_RANK];
    int r = 0;
    if (j->nodes[s].type != TFE_JSON_ARRAY || j->nodes[s].count > TFE_MAX_RANK)
      return fail(1, "instance '%s': shape %d is not an array of at most %d sizes", a->instance, k, TFE_MAX_RANK);
    for (int d = j->nodes[s].first; d >= 0; d = j->nodes[d].next) {
      double x = j->nodes[d].num;
      if (j->nodes[d].type != TFE_JSON_NUMBER || x < 0 || x != floor(x) || x > 1e15)
        return fail(1, "instance '%s': shape %d has a bad size", a->instance, k);
      dims[r++] = (int64_t)x;
    }
    tfe_dyn *t = &pr->in[k];
    t->dtype = dt;
    if (tfe_layout_dense(r, dims, a->colmajor ? TFE_COLMAJOR : TFE_ROWMAJOR, &t->lay) != TFE_OK)
      return fail(1, "instance '%s': shape %d: %s", a->instance, k, tfe_last_error());
    int64_t cnt = tfe_layout_numel(&t->lay), bytes;
    if (!tfe__mul_ok(cnt, (int64_t)di->size, &bytes))
      return fail(1, "instance '%s': shape %d: %lld elements of %zu bytes overflow the byte count", a->instance, k,
                  (long long)cnt, di->size);
    if (tfe_storage_new((size_t)bytes, &t->st) != TFE_OK) return fail(1, "%s", tfe_last_error());
    t->data = t->st->ptr;
    size_t parts = di->is_complex ? 2 : 1, psz = di->size / parts;
    for (int64_t e = 0; e < cnt * (int64_t)parts; e++) {
      double u = (double)(rng_next(&rs) >> 11) * 0x1.0p-53;
      double x = di->algebra == TFE_ALGEBRA_MAXTIMES ? u : 2 * u - 1;
      if (psz == 4) ((float *)t->data)[e] = (float)x; else ((double *)t->data)[e] = x;
    }
  }
  return 0;
}

static int load_npy(const args *a, const char *dtype_opt, tfe_dtype *dt, problem *pr) {
  snprintf(pr->name, sizeof pr->name, "cli");
  pr->expr = dupstr(a->expr);
  pr->n = a->ninputs;
  if (pr->n == 0) return fail(2, "no input files given");
  pr->in = (tfe_dyn *)calloc((size_t)pr->n + 1, sizeof(tfe_dyn));
  if (!pr->expr || !pr->in) return fail(1, "out of memory");
  for (int k = 0; k < pr->n; k++) {
    if (tfe_npy_load(a->inputs[k], &pr->in[k]) != TFE_OK) return fail(1, "%s", tfe_last_error());
    if (pr->in[k].dtype != pr->in[0].dtype)
      return fail(1, "'%s' is %s but '%s' is %s (all inputs must have one dtype)", a->inputs[k],
                  tfe_dtype_name(pr->in[k].dtype), a->inputs[0], tfe_dtype_name(pr->in[0].dtype));
  }
  const char *name = tfe_dtype_name(pr->in[0].dtype);
  if (dtype_opt && strcmp(dtype_opt, name))
    return fail(1, "--dtype %s but the inputs are %s (convert them first)", dtype_opt, name);
  if (pr->in[0].dtype == TFE_DT_I32 || pr->in[0].dtype == TFE_DT_I64) { *dt = pr->in[0].dtype; return 0; }
  int rc = pick_kind(name, a->algebra, dt);
  for (int k = 0; k < pr->n; k++) pr->in[k].dtype = *dt; /* same bytes, the algebra's kind */
  return rc;
}

/* One position of a stored path: a whole number that fits an int (the library checks the range). */
static bool path_entry(const tfe_json_node *x, int *v) {
  if (x->type != TFE_JSON_NUMBER || x->num != floor(x->num) || !(x->num >= 0 && x->num <= INT_MAX)) return false;
  *v = (int)x->num;
  return true;
}
/* Path of the instance (`which` = opt_flops / opt_size) as pairs. */
static int instance_path(const problem *pr, const char *which, int **pairs, int *nsteps, double *l10) {
  const tfe_json *j = &pr->doc;
  int p = tfe_json_get(j, tfe_json_get(j, 0, "paths"), which);
  int arr = tfe_json_get(j, p, "path");
  if (arr < 0 || j->nodes[arr].type != TFE_JSON_ARRAY) return fail(1, "the instance has no paths.%s.path", which);
  *nsteps = j->nodes[arr].count;
  *pairs = (int *)calloc(2 * (size_t)*nsteps + 2, sizeof(int));
  if (!*pairs) return fail(1, "out of memory");
  int k = 0;
  for (int s = j->nodes[arr].first; s >= 0; s = j->nodes[s].next, k++) {
    if (j->nodes[s].type != TFE_JSON_ARRAY || j->nodes[s].count != 2) return fail(1, "paths.%s.path step %d is not a pair", which, k);
    int x = j->nodes[s].first, y = j->nodes[x].next;
    if (!path_entry(&j->nodes[x], &(*pairs)[2 * k]) || !path_entry(&j->nodes[y], &(*pairs)[2 * k + 1]))
      return fail(1, "paths.%s.path step %d is not a pair of operand positions (integers in [0, %d))", which, k, pr->n);
  }
  int f = tfe_json_get(j, p, "log10_flops");
  *l10 = f >= 0 ? j->nodes[f].num : NAN;
  return 0;
}

int main(int argc, char **argv) {
  args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  problem pr;
  memset(&pr, 0, sizeof pr);
  tfe_dtype dt = TFE_DT_F64;
  /* Everything below releases through `done`, so error exits leak nothing (the sanitized
   * test suite runs this tool). */
  const tfe_layout **lay = NULL;
  tfe_einsum_plan *plan = NULL;
  int *given = NULL, ngiven = 0;
  double *ms = NULL;
  prof_t prof = {0};
  tfe_dyn out;
  memset(&out, 0, sizeof out);
  if (a.instance) {
    if ((rc = pick_kind(a.dtype ? a.dtype : "f64", a.algebra, &dt))) goto done;
    if ((rc = load_instance(&a, dt, &pr))) goto done;
  } else if ((rc = load_npy(&a, a.dtype, &dt, &pr))) goto done;
  for (int k = 0; a.save_inputs && k < pr.n; k++) { /* the same inputs for peer programs */
    char path[1200];
    snprintf(path, sizeof path, "%s/in%d.npy", a.save_inputs, k);
    if (tfe_npy_save(path, &pr.in[k]) != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  }
  tfe_blas_set_num_threads(a.threads);
  if (tfe_blas_get_num_threads() < a.threads) { /* the library caps far oversubscribed counts */
    fprintf(stderr, "tfe-einsum: warning: --threads %d is far above this machine's processors; using %d\n", a.threads,
            tfe_blas_get_num_threads());
    a.threads = tfe_blas_get_num_threads();
  }
  tfe_set_num_threads(a.threads);

  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.seed = a.seed; o.memory_limit = a.memory_limit; o.no_cache = true;
  /* The result in the inputs' memory order (what numpy and torch return for C-ordered inputs):
   * row-major for an instance read row-major and for .npy inputs that are all C-ordered. */
  bool rowmajor = a.instance ? !a.colmajor : true;
  for (int k = 0; !a.instance && k < pr.n; k++) {
    const tfe_layout *L = &pr.in[k].lay;
    for (int i = 0; i + 1 < L->rank; i++)
      if (L->dims[i] > 1 && L->dims[i + 1] > 1 && L->strides[i] < L->strides[i + 1]) rowmajor = false;
  }
  o.out_order = rowmajor ? TFE_ROWMAJOR : TFE_COLMAJOR;
  if (a.write_weight >= 0) o.write_weight = a.write_weight > 0 ? a.write_weight : -1; /* opts: 0 = default, < 0 = none */
  double inst_l10 = NAN;
  if (!strcmp(a.path, "greedy")) o.algo = TFE_PATH_GREEDY;
  else if (!strcmp(a.path, "dp")) o.algo = TFE_PATH_DP;
  else if (!strcmp(a.path, "anneal")) { o.algo = TFE_PATH_ANNEAL; o.time_budget = a.budget; }
  else if (!strcmp(a.path, "auto")) { o.algo = TFE_PATH_AUTO; o.time_budget = a.budget; }
  else if (!strcmp(a.path, "instance:opt_flops") || !strcmp(a.path, "instance:opt_size")) {
    if ((rc = instance_path(&pr, a.path + 9, &given, &ngiven, &inst_l10))) goto done;
    o.algo = TFE_PATH_GIVEN; o.path = given; o.path_nsteps = ngiven; o.path_format = TFE_PATH_LINEAR;
  } else { rc = fail(2, "unknown path '%s' (greedy, dp, anneal, auto, instance:opt_flops, instance:opt_size)", a.path); goto done; }

  lay = (const tfe_layout **)calloc((size_t)pr.n + 1, sizeof *lay);
  if (!lay) { rc = fail(1, "out of memory"); goto done; }
  for (int k = 0; k < pr.n; k++) lay[k] = &pr.in[k].lay;
  double t0 = tfe__now();
  if (tfe_einsum_plan_new(&plan, dt, pr.expr, pr.n, lay, &o) != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  double plan_ms = 1e3 * (tfe__now() - t0);
  tfe_einsum_cost cost = tfe_einsum_plan_cost(plan);

  /* the stored opt_flops path in our cost model, for the quality ratio */
  double ref_flops = NAN;
  if (a.instance) {
    int *rp = NULL, rn = 0;
    double l10;
    int q = tfe_json_get(&pr.doc, tfe_json_get(&pr.doc, 0, "paths"), "opt_flops");
    if (q >= 0 && (rc = instance_path(&pr, "opt_flops", &rp, &rn, &l10)) != 0) { free(rp); goto done; } /* malformed */
    if (q >= 0) {
      tfe_einsum_opts ro = o;
      ro.algo = TFE_PATH_GIVEN; ro.path = rp; ro.path_nsteps = rn; ro.memory_limit = 0;
      tfe_einsum_plan *rplan = NULL;
      if (tfe_einsum_plan_new(&rplan, dt, pr.expr, pr.n, lay, &ro) == TFE_OK) {
        ref_flops = tfe_einsum_plan_cost(rplan).flops;
        tfe_einsum_plan_release(rplan);
      }
      if (isnan(inst_l10)) inst_l10 = l10;
    }
    free(rp);
  }

  out.dtype = dt;
  int64_t odims[TFE_MAX_RANK];
  for (int i = 0; i < plan->out_rank; i++) odims[i] = plan->out_dims[i];
  int64_t obytes = 0;
  if (tfe_layout_dense(plan->out_rank, odims, o.out_order, &out.lay) != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  if (!tfe__mul_ok(tfe_layout_numel(&out.lay), (int64_t)tfe_dtype_get(dt)->size, &obytes)) {
    rc = fail(1, "the output's %lld elements overflow the byte count", (long long)tfe_layout_numel(&out.lay));
    goto done;
  }
  if (tfe_storage_new((size_t)obytes, &out.st) != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  out.data = out.st->ptr;
  double sum = 0;
  ms = (double *)calloc((size_t)a.repeat, sizeof(double));
  if (!ms) { rc = fail(1, "out of memory"); goto done; }
  if (a.profile && !a.plan_only) {
    prof.npre = plan->npre; prof.nsteps = plan->nsteps; prof.lays = a.profile_layouts;
    prof.row = (prof_row *)calloc((size_t)(prof.npre + prof.nsteps) + 1, sizeof *prof.row);
    if (!prof.row) { rc = fail(1, "out of memory"); goto done; }
    g_prof = &prof;
    tfe_einsum_set_step_hook(prof_hook, &prof);
  }
  if (a.plan_only) a.repeat = 1;
  else if (run_any(dt, plan, pr.n, pr.in, &out, &a.repeat, a.max_time > 0 ? 1e3 * a.max_time : INFINITY, a.warmup, ms, &sum) != TFE_OK) {
    rc = fail(1, "%s", tfe_last_error());
    goto done;
  }
  if (g_prof) {
    tfe_einsum_set_step_hook(NULL, NULL);
    prof_print(&prof);
    g_prof = NULL;
  }
  /* the output file first: the summary says the run succeeded, so it comes after the write */
  if (a.out && !a.plan_only && tfe_npy_save(a.out, &out) != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  qsort(ms, (size_t)a.repeat, sizeof *ms, cmp_d);
  double med = a.repeat % 2 ? ms[a.repeat / 2] : 0.5 * (ms[a.repeat / 2 - 1] + ms[a.repeat / 2]);

  if (a.print_path) {
    const int *pairs;
    int ns = tfe_einsum_plan_path(plan, &pairs);
    printf("path:");
    for (int s = 0; s < ns; s++) printf(" (%d,%d)", pairs[2 * s], pairs[2 * s + 1]);
    printf("\nlog10_flops=%.4f log2_size=%.4f max_rank=%d slices=%lld plan_ms=%.1f", cost.log10_flops, cost.log2_size,
           cost.max_rank, (long long)cost.slices, plan_ms);
    if (!isnan(ref_flops)) printf(" opt_flops_path_log10_flops=%.4f (instance file: %.4f) ratio=%.4f", log10(ref_flops), inst_l10,
                                  cost.flops / ref_flops);
    printf("\n");
  }
  printf("name=%s dtype=%s threads=%d path=%s median_ms=%.3f runs=%d plan_ms=%.1f log10_flops=%.4f log2_size=%.4f slices=%lld",
         pr.name, tfe_dtype_name(dt), a.threads, a.path, med, a.repeat, plan_ms, cost.log10_flops, cost.log2_size,
         (long long)cost.slices);
  if (!isnan(ref_flops)) printf(" flops_vs_opt_flops=%.4f", cost.flops / ref_flops);
  printf(" checksum=%.10g\n", sum);
done:
  if (plan) tfe_einsum_plan_release(plan);
  tfe_storage_release(out.st);
  for (int k = 0; pr.in && k < pr.n; k++) tfe_storage_release(pr.in[k].st);
  if (g_prof) tfe_einsum_set_step_hook(NULL, NULL);
  for (int r = 0; prof.row && r < prof.npre + prof.nsteps; r++) free(prof.row[r].lays);
  free(prof.row);
  free(pr.in); free(pr.expr); free(lay); free(ms); free(given);
  tfe_json_free(&pr.doc);
  return rc;
}
