/* tfe-einsum — contract a tensor network from the command line.
 *
 *   tfe-einsum EXPR A.npy B.npy ... -o OUT.npy [options]
 *   tfe-einsum --instance FILE.json [options]      seeded random inputs
 *
 * Options: --path greedy|dp|anneal|auto|instance:opt_flops|instance:opt_size
 *          --dtype f32|f64|c64|c128   --algebra standard|maxplus|minplus|maxtimes
 *          --threads N  --repeat K  --memory-limit BYTES  --time-budget SECONDS
 *          --seed N  --colmajor  --print-path  --max-time SECONDS  --warmup  --profile[-layouts]
 *          --progress  --quiet  --print-tree dot|json  --device cpu|cuda:N  --
 * Any expression numpy.einsum accepts, scalar ones (`->`, `,->`) and ones starting with '-'
 * included: an argument that is no option and holds "->" is the expression; after `--` every
 * argument is. One summary line on stdout (on stderr with --print-tree, whose tree takes
 * stdout), printed once everything (the output file included) succeeded; errors are one line
 * on stderr and exit status 1 (usage: 2; Ctrl-C: 130, nothing written). Files are written
 * whole or not at all (a temporary file renamed into place). Every size is computed with
 * overflow checks. A progress line on stderr when it is a terminal and the contraction runs
 * past a second (TFE_PROGRESS_DELAY=SECONDS changes that second; tests use 0).
 *
 * --device cuda:N: the inputs are uploaded to GPU N once, every timed run contracts them there
 * along the same plan (the backend "cuda:N" of the GPU companion, compiled into this program:
 * the vendor libraries are opened at run time) and waits for the device; the result is
 * downloaded once at the end. median_ms excludes the transfers; median_ms_transfers is the
 * median of as many runs again that upload the inputs, contract and download the result. A
 * first run, never timed, compiles or loads the device's kernels (first_ms: its time). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <tenferro/gpu/tenferro_gpu.c> /* the GPU companion (--device cuda:N); includes <tenferro.h> */
#include <errno.h>
#include <limits.h>

typedef struct args {
  const char *expr, *out, *instance, *path, *dtype, *algebra, *save_inputs, *tree, *device;
  const char *inputs[1024];
  int ninputs, threads, repeat;
  int gpu; /* --device cuda:N: N; -1: the CPU */
  int64_t memory_limit;
  double budget, max_time, write_weight;
  uint64_t seed;
  bool colmajor, print_path, plan_only, warmup, profile, profile_layouts, progress, quiet, threads_given;
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

/* The cores this process may run on, as OpenMP counts them by default: OMP_NUM_THREADS when it
 * is set (its first number), else the CPUs of the affinity mask, else the online processors. */
static int default_threads(void) {
  const char *e = getenv("OMP_NUM_THREADS");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (end != e && (*end == 0 || *end == ',') && v >= 1 && v <= 1024) return (int)v;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 && n <= 1024 ? (int)n : 1;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->threads = default_threads(); a->repeat = 1; a->path = "auto"; a->algebra = "standard"; a->budget = 1.5; a->seed = 42;
  a->write_weight = -1; /* not given: the library's default */
  a->device = "cpu"; a->gpu = -1;
  bool opts_done = false; /* after "--" every argument is an operand (POSIX) */
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    bool has_val = i + 1 < argc;
    int64_t v;
    if (!opts_done && !strcmp(s, "--")) { opts_done = true; continue; }
    if (opts_done || s[0] != '-' || !s[1] || (!a->expr && !a->instance && strstr(s, "->") && strncmp(s, "--", 2))) {
      /* an operand: the expression (no option holds "->": "->", "->i" are expressions), then inputs */
      if (!a->expr && !a->instance) a->expr = s;
      else if (a->ninputs < 1024) a->inputs[a->ninputs++] = s;
      else return fail(2, "too many inputs");
      continue;
    }
#define NEED_VAL() do { if (!has_val) return fail(2, "option %s needs a value", s); } while (0)
    if (!strcmp(s, "-o") || !strcmp(s, "--output")) { NEED_VAL(); a->out = argv[++i]; }
    else if (!strcmp(s, "--instance")) { NEED_VAL(); a->instance = argv[++i]; }
    else if (!strcmp(s, "--path")) { NEED_VAL(); a->path = argv[++i]; }
    else if (!strcmp(s, "--dtype")) { NEED_VAL(); a->dtype = argv[++i]; }
    else if (!strcmp(s, "--algebra")) { NEED_VAL(); a->algebra = argv[++i]; }
    else if (!strcmp(s, "--threads")) { NEED_VAL(); if (!parse_i64(argv[++i], 1, &v) || v > 1024) return fail(2, "--threads wants a positive integer, got '%s'", argv[i]); a->threads = (int)v; a->threads_given = true; }
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
    else if (!strcmp(s, "--device")) {
      NEED_VAL();
      a->device = argv[++i];
      if (!strncmp(a->device, "cuda:", 5)) {
        if (!parse_i64(a->device + 5, 0, &v) || v >= 1024 || a->device[5] < '0' || a->device[5] > '9')
          return fail(2, "--device wants cpu or cuda:N (N a device number, 0 for the first GPU), got '%s'", a->device);
        a->gpu = (int)v;
      } else if (strcmp(a->device, "cpu"))
        return fail(2, "--device wants cpu or cuda:N (N a device number, 0 for the first GPU), got '%s'", a->device);
      else a->gpu = -1;
    }
    else if (!strcmp(s, "--warmup")) a->warmup = true;
    else if (!strcmp(s, "--progress")) a->progress = true;
    else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) a->quiet = true;
    else if (!strcmp(s, "--print-tree")) {
      NEED_VAL();
      a->tree = argv[++i];
      if (strcmp(a->tree, "dot") && strcmp(a->tree, "json")) return fail(2, "--print-tree wants dot or json, got '%s'", a->tree);
    }
    else if (!strcmp(s, "--profile")) a->profile = true;
    else if (!strcmp(s, "--profile-layouts")) a->profile = a->profile_layouts = true;
    else if (!strcmp(s, "--colmajor")) a->colmajor = true;
    else if (!strcmp(s, "--print-path")) a->print_path = true;
    else if (!strcmp(s, "--plan-only")) a->plan_only = true;
    else if (!strcmp(s, "--save-inputs")) { NEED_VAL(); a->save_inputs = argv[++i]; }
    else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      puts("usage: tfe-einsum [options] [--] EXPR A.npy ... -o OUT.npy | tfe-einsum --instance FILE.json [options]\n"
           "  EXPR: any numpy.einsum expression ('ij,jk->ik', 'ii', '...i->...', scalars '->' and ',->');\n"
           "    an argument holding '->' is the expression even when it starts with '-'; '--' ends the options\n"
           "  --path greedy|dp|anneal|auto|instance:opt_flops|instance:opt_size  --dtype f32|f64|c64|c128\n"
           "  --algebra standard|maxplus|minplus|maxtimes (maxplus: max and +, minplus: min and +, maxtimes:\n"
           "    max and * -- a semiring on the non-negative reals only: a negative or NaN input is refused)\n"
           "  --threads N (default: the cores this process may use, OMP_NUM_THREADS if set; the summary\n"
           "    says threads=N)  --repeat K  --memory-limit BYTES\n"
           "  --write-weight W (cost of one intermediate element written, in multiply-adds; 0: flops only)\n"
           "  --time-budget SECONDS (anneal/auto planning)  --seed N  --colmajor  --print-path\n"
           "  --max-time SECONDS (stop repeating once the timed runs took this long; at least one run)\n"
           "  --profile (per-step table of the timed runs on stderr: time, multiply-adds, rate)\n"
           "  --profile-layouts (the same, with each step's views: label:dim/stride)\n"
           "  --warmup (one untimed run first; counted as timed when it takes 1 s or more)\n"
           "  --plan-only (plan and print the path, do not contract)  --save-inputs DIR (DIR/in<k>.npy)\n"
           "  --progress (a progress line on stderr even when it is no terminal, from the start: one line\n"
           "    a second)  --quiet, -q (no progress line; on a terminal it shows once a run passes 1 s:\n"
           "    bar, % of multiply-adds, steps, elapsed, estimated remaining time)\n"
           "  --device cpu|cuda:N (default cpu; cuda:N: inputs uploaded to GPU N once, each run contracts there\n"
           "    along the same plan and waits for the device; median_ms excludes transfers, median_ms_transfers\n"
           "    is as many runs again of upload + contraction + download; a first untimed run loads the kernels,\n"
           "    first_ms; --profile then waits after each step)\n"
           "  --print-tree dot|json (the contraction tree on stdout, the summary then on stderr: per node\n"
           "    labels, size, multiply-adds, share of the total, memory layout; schema in docs/einsum.md;\n"
           "    render: tfe-einsum ... --plan-only --print-tree dot | dot -Tsvg > tree.svg)\n"
           "  Ctrl-C stops the contraction at the next step: message, exit status 130, no output written");
      exit(0);
    }
    else return fail(2, "unknown option '%s' (see --help; an expression starting with '-' goes after '--')", s);
#undef NEED_VAL
  }
  if (!a->instance && !a->expr) return fail(2, "no expression given (usage: tfe-einsum EXPR A.npy ... -o OUT.npy, or --instance FILE.json)");
  if (a->instance && (a->expr || a->ninputs)) return fail(2, "--instance takes no expression or input files");
  if (a->progress && a->quiet) return fail(2, "--progress and --quiet contradict each other");
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
/* On a GPU (gpu >= 0) the hook waits for the device after each step, so a step's time is its
 * queueing plus its run on the device: the engine's step times count from the end of the
 * previous step's report, the hook's wait included, which carry moves back to its own step. */
typedef struct prof_t { prof_row *row; int nsteps, npre, gpu; double carry; bool on, lays; } prof_t;
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
  double sec = in->seconds;
  if (pf->gpu >= 0) {
    double t0 = tfe__now();
    tfe_gpu_synchronize(pf->gpu);
    double h = tfe__now() - t0;
    sec += h - pf->carry;
    pf->carry = h;
  }
  w->sec += sec; w->what = in->what; w->ra = in->rank_a; w->rb = in->rank_b; w->rc = in->rank_c;
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

/* ---- the progress line and Ctrl-C ------------------------------------------------------------------ */
/* The library calls back after every step (tfe_einsum_set_progress, this thread); the line is
 * drawn on stderr: on a terminal redrawn in place ("\r", at most 10 times a second) once the
 * runs took `delay` seconds, elsewhere (--progress) a line a second. Ctrl-C sets a flag that the
 * next report turns into a cancel (the library stops before its next step); a second Ctrl-C
 * kills the program (SA_RESETHAND). */
static volatile sig_atomic_t g_interrupted;
static void on_sigint(int sig) { (void)sig; g_interrupted = 1; }
typedef struct progress_t {
  bool draw, tty;       /* draw the line at all; in place on a terminal */
  double delay;         /* seconds of running before the first line */
  double t_runs;        /* when the first run started (tfe__now) */
  double last;          /* when the line was last drawn (-1: never) */
  double run_avg;       /* mean seconds of the finished runs */
  int run, runs;        /* the run under way (0-based), of how many at most */
  bool shown;           /* a line is on the terminal (erase it before the summary) */
} progress_t;
static void fmt_secs(char *b, size_t cap, double s) {
  if (!(s >= 0) || s > 1e7) { snprintf(b, cap, "?"); return; }
  long t = (long)(s + 0.5);
  if (t >= 3600) snprintf(b, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else snprintf(b, cap, "%ld:%02ld", t / 60, t % 60);
}
static void progress_draw(progress_t *g, const tfe_einsum_progress_info *in, double now) {
  double frac = in->madds_total > 0 ? in->madds_done / in->madds_total
                                    : (in->steps_total > 0 ? (double)in->steps_done / (double)in->steps_total : 1);
  if (frac > 1) frac = 1;
  char bar[32], el[32], left[32], runs[48] = "";
  int w = 24, full = (int)(frac * w + 1e-9);
  for (int i = 0; i < w; i++) bar[i] = i < full ? '#' : '.';
  bar[w] = 0;
  double per_run = frac > 0 ? in->seconds / frac : NAN; /* this run's estimated length */
  double rest = frac > 0 ? per_run - in->seconds : NAN;
  if (g->runs > 1) {
    rest += (g->run_avg > 0 ? g->run_avg : per_run) * (g->runs - g->run - 1);
    snprintf(runs, sizeof runs, "  run %d/%d", g->run + 1, g->runs);
  }
  fmt_secs(el, sizeof el, now - g->t_runs);
  fmt_secs(left, sizeof left, rest);
  fprintf(stderr, "%s[%s] %5.1f%%  step %lld/%lld%s  %s elapsed  ~%s left%s", g->tty ? "\r" : "", bar, 100 * frac,
          (long long)in->steps_done, (long long)in->steps_total, runs, el, left, g->tty ? "\033[K" : "\n");
  fflush(stderr);
  g->last = now;
  g->shown = g->tty;
}
static int progress_cb(void *ctx, const tfe_einsum_progress_info *in) {
  if (g_interrupted) return 1; /* Ctrl-C: cancel before the next step */
  progress_t *g = (progress_t *)ctx;
  if (!g->draw) return 0;
  double now = tfe__now();
  if (now - g->t_runs < g->delay) return 0;
  bool end = in->steps_done == in->steps_total;
  if (g->last < 0 || now - g->last >= (g->tty ? 0.1 : 1.0) || (end && g->run + 1 == g->runs && !g->tty))
    progress_draw(g, in, now);
  return 0;
}
static void progress_clear(progress_t *g) {
  if (g->shown) fputs("\r\033[K", stderr);
  g->shown = false;
}

/* ---- --print-tree: the contraction tree as dot or JSON (docs/einsum.md "Contraction trees") ------------ */
/* Label `l` (a dense id of the plan) as written: UTF-8 of its code point, or #id for integer labels. */
static size_t label_str(const tfe_einsum_plan *p, int32_t l, char *b) {
  uint32_t c = (uint32_t)p->label_id[l];
  if (p->int_labels) return (size_t)sprintf(b, "#%d", (int)p->label_id[l]);
  if (c < 0x80) { b[0] = (char)c; b[1] = 0; return 1; }
  if (c < 0x800) { b[0] = (char)(0xC0 | c >> 6); b[1] = (char)(0x80 | (c & 63)); b[2] = 0; return 2; }
  if (c < 0x10000) { b[0] = (char)(0xE0 | c >> 12); b[1] = (char)(0x80 | (c >> 6 & 63)); b[2] = (char)(0x80 | (c & 63)); b[3] = 0; return 3; }
  b[0] = (char)(0xF0 | c >> 18); b[1] = (char)(0x80 | (c >> 12 & 63)); b[2] = (char)(0x80 | (c >> 6 & 63));
  b[3] = (char)(0x80 | (c & 63)); b[4] = 0;
  return 4;
}
/* The labels lab[0..r) as one string, escaped for a JSON or dot string (both take \" and \\). */
static void labels_str(const tfe_einsum_plan *p, const int32_t *lab, int r, char *b, size_t cap) {
  size_t n = 0;
  b[0] = 0;
  for (int i = 0; i < r && n + 16 < cap; i++) {
    char u[16];
    label_str(p, lab[i], u);
    if (p->int_labels && i) b[n++] = ' ';
    if (u[0] == '"' || u[0] == '\\') b[n++] = '\\';
    for (char *c = u; *c; c++) b[n++] = *c;
    b[n] = 0;
  }
}
typedef struct tree_node {
  const char *kind;        /* "input", "reduce", "contract", "zip" */
  int a, b;                /* children (node ids; -1: none) */
  int operand;             /* inputs: the operand */
  const tfe_layout *lay;   /* per-slice layout (sliced labels of dim 1 in steps) */
  const int32_t *lab;
  double madds;            /* all slices */
} tree_node;
/* Multiply-adds of a step over nodes x and y (y NULL: a reduction), per slice. */
static double tree_madds(const tfe_einsum_plan *p, const tree_node *x, const tree_node *y) {
  int32_t seen[2 * TFE_MAX_RANK];
  int ns = 0;
  double f = 1;
  for (int q = 0; q < 2; q++) {
    const tree_node *t = q ? y : x;
    for (int i = 0; t && i < t->lay->rank; i++) {
      bool dup = false;
      for (int j = 0; j < ns; j++) dup = dup || seen[j] == t->lab[i];
      if (dup) continue;
      seen[ns++] = t->lab[i];
      f *= p->slice_of[t->lab[i]] >= 0 ? 1.0 : (double)t->lay->dims[i];
    }
  }
  return f;
}
/* s into a quoted JSON or dot string: '"' and '\\' escaped, control characters as \u00XX (dot: '?'). */
static void put_esc(FILE *f, const char *s, bool json) {
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 32) { if (json) fprintf(f, "\\u%04x", *c); else fputc('?', f); }
    else fputc(*c, f);
  }
}
static int print_tree(const char *fmt, const tfe_einsum_plan *p, const char *expr, tfe_dtype dt, FILE *f) {
  int n = p->n, nn = n + p->nsteps + p->npre;
  tree_node *t = (tree_node *)calloc((size_t)nn + 1, sizeof *t);
  if (!t) return fail(1, "out of memory");
  /* ids: inputs 0..n-1, pairwise step k: n+k (the plan's SSA ids), leaf reduction q: n+nsteps+q */
  for (int k = 0; k < n; k++) t[k] = (tree_node){"input", -1, -1, k, &p->leaf[k].lay, p->leaf[k].lab, 0};
  for (int q = 0; q < p->npre; q++) {
    tree_node *r = &t[n + p->nsteps + q];
    *r = (tree_node){"reduce", p->pre[q].a, -1, -1, &p->pre[q].lay, p->pre[q].lab, 0};
    r->madds = tree_madds(p, &t[p->pre[q].a], NULL);
  }
  int64_t ns = p->nslices > 1 ? p->nslices : 1;
  static const tfe_layout scalar = {0};
  for (int k = 0; k < p->nsteps; k++) {
    int a = p->step[k].a, b = p->step[k].b;
    if (a < n && p->leaf[a].pre >= 0) a = n + p->nsteps + p->leaf[a].pre;
    if (b < n && p->leaf[b].pre >= 0) b = n + p->nsteps + p->leaf[b].pre;
    bool last = k + 1 == p->nsteps;
    t[n + k] = (tree_node){p->step[k].zip ? "zip" : "contract", a, b, -1, last ? &p->out_lay : &p->step[k].lay,
                           last ? p->out_lab : p->step[k].lab, 0};
    t[n + k].madds = tree_madds(p, &t[a], &t[b]);
  }
  if (n == 1) t[0].madds = 0;
  double total = 0;
  for (int i = 0; i < nn; i++) total += (t[i].madds *= (double)ns);
  int root = p->nsteps > 0 ? n + p->nsteps - 1 : (p->npre ? n + p->nsteps : 0);
  double max_share = 0;
  for (int i = 0; i < nn && total > 0; i++) if (t[i].madds / total > max_share) max_share = t[i].madds / total;
  bool json = !strcmp(fmt, "json");
  char L[1024], S[256];
  labels_str(p, p->sliced ? p->sliced : p->out_lab, p->sliced ? p->nsliced : 0, S, sizeof S);
  const tfe_dtype_info *di = tfe_dtype_get(dt);
  if (json) {
    fprintf(f, "{\n  \"schema\": \"tenferro-einsum-tree/1\",\n  \"expression\": \"");
    put_esc(f, expr, true);
    fprintf(f, "\",\n  \"dtype\": \"%s\",\n  \"elem_bytes\": %zu,\n  \"madds\": %.17g,\n", tfe_dtype_name(dt), di->size, total);
    fprintf(f, "  \"slices\": %lld,\n  \"sliced_labels\": \"%s\",\n  \"root\": %d,\n  \"nodes\": [\n", (long long)ns, S, root);
  } else {
    fprintf(f, "digraph contraction {\n  rankdir=BT;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    fprintf(f, "  label=\"");
    put_esc(f, expr, false);
    fprintf(f, "  (%s, %.4g multiply-adds%s%s)\"; labelloc=t; fontname=\"Helvetica\";\n", tfe_dtype_name(dt), total,
            ns > 1 ? ", sliced over " : "", ns > 1 ? S : "");
  }
  for (int i = 0; i < nn; i++) {
    const tree_node *x = &t[i];
    const tfe_layout *lay = x->lay;
    if (!lay) lay = &scalar;
    labels_str(p, x->lab, lay->rank, L, sizeof L);
    double elems = 1;
    for (int d = 0; d < lay->rank; d++) elems *= (double)lay->dims[d];
    /* memory order: labels by stride, the fastest first */
    int ord[TFE_MAX_RANK];
    for (int d = 0; d < lay->rank; d++) ord[d] = d;
    for (int d = 1; d < lay->rank; d++)
      for (int e = d; e > 0 && lay->strides[ord[e]] < lay->strides[ord[e - 1]]; e--) { int z = ord[e]; ord[e] = ord[e - 1]; ord[e - 1] = z; }
    int32_t olab[TFE_MAX_RANK];
    for (int d = 0; d < lay->rank; d++) olab[d] = x->lab[ord[d]];
    char O[1024];
    labels_str(p, olab, lay->rank, O, sizeof O);
    double share = total > 0 ? x->madds / total : 0;
    if (json) {
      fprintf(f, "    {\"id\": %d, \"kind\": \"%s\", \"children\": [", i, x->kind);
      if (x->a >= 0) fprintf(f, "%d", x->a);
      if (x->b >= 0) fprintf(f, ", %d", x->b);
      fprintf(f, "], \"labels\": \"%s\", \"dims\": [", L);
      for (int d = 0; d < lay->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)lay->dims[d]);
      fprintf(f, "], \"strides\": [");
      for (int d = 0; d < lay->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)lay->strides[d]);
      fprintf(f, "], \"memory_order\": \"%s\", \"elems\": %.17g, \"bytes\": %.17g, \"madds\": %.17g, \"share\": %.6f",
              O, elems, elems * (double)di->size, x->madds, share);
      if (x->operand >= 0) fprintf(f, ", \"operand\": %d", x->operand);
      fprintf(f, "}%s\n", i + 1 < nn ? "," : "");
    } else {
      /* fill: white to orange by share of the multiply-adds (the heaviest node deepest) */
      int shade = (int)(255 - 175 * (max_share > 0 ? x->madds / total / max_share : 0));
      char title[64];
      if (x->operand >= 0) snprintf(title, sizeof title, "operand %d", x->operand);
      else snprintf(title, sizeof title, "%s %d", x->kind, i);
      fprintf(f, "  n%d [label=\"%s\\n%s\\n%.4g elems", i, title, L[0] ? L : "(scalar)", elems);
      if (x->madds > 0) fprintf(f, "\\n%.3g madds (%.1f%%)", x->madds, 100 * share);
      if (lay->rank > 1) fprintf(f, "\\nmemory: %s", O);
      fprintf(f, "\", fillcolor=\"#ff%02x%02x\"%s];\n", shade > 255 ? 255 : (shade + 255) / 2, shade < 0 ? 0 : shade,
              i == root ? ", penwidth=2" : "");
    }
  }
  if (json) fprintf(f, "  ]\n}\n");
  else {
    for (int i = 0; i < nn; i++) {
      if (t[i].a >= 0) fprintf(f, "  n%d -> n%d;\n", t[i].a, i);
      if (t[i].b >= 0) fprintf(f, "  n%d -> n%d;\n", t[i].b, i);
    }
    fprintf(f, "}\n");
  }
  free(t);
  return ferror(f) ? fail(1, "writing the tree failed") : 0;
}

/* ---- per-kind execution and checksums ----------------------------------------------------------- */
static prof_t *g_prof; /* on during timed runs only */
static progress_t *g_progress; /* the progress line's state during the runs */
/* A run ended after `sec` seconds: the next one starts (the line's run count and estimate). */
static void progress_next_run(double sec) {
  progress_t *g = g_progress;
  if (!g) return;
  g->run_avg = (g->run_avg * g->run + sec) / (g->run + 1);
  g->run++;
}
static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

/* One contraction of the plan: out = ops contracted, on backend be (NULL: the host's). */
static tfe_status exec_any(const tfe_prims_backend *be, tfe_dtype dt, const tfe_einsum_plan *p, int n, const tfe_dyn *in,
                           const tfe_dyn *out) {
  switch (dt) {
#define EXEC_KIND(s, T, R, alg, cplx, flt, DT)                                                               \
  case DT: {                                                                                               \
    tfe_view_##s small[16], *v = n <= 16 ? small : (tfe_view_##s *)calloc((size_t)n, sizeof *v);          \
    if (!v) return TFE_ERR_ALLOC;                                                                          \
    for (int k = 0; k < n; k++) { v[k].data = (T *)in[k].data; v[k].lay = in[k].lay; v[k].conj = false; }   \
    tfe_view_##s o = {(T *)out->data, out->lay, false};                                                    \
    tfe_status st = be ? tfe_einsum_execute_on_##s(be, p, tfe_sr_one_##s(), v, tfe_sr_zero_##s(), &o)       \
                       : tfe_einsum_execute_##s(p, tfe_sr_one_##s(), v, tfe_sr_zero_##s(), &o);             \
    if (v != small) free(v);                                                                               \
    return st;                                                                                             \
  }
    TFE_KINDS(EXEC_KIND)
#undef EXEC_KIND
    default: return TFE_FAIL(TFE_ERR_DTYPE, "unsupported dtype");
  }
}

/* Where a run contracts: the host (gpu < 0), or GPU `gpu` with the inputs already there (din,
 * dout) or, with `transfers`, uploaded from the host inputs and the result downloaded. */
typedef struct runner {
  tfe_dtype dt;
  const tfe_einsum_plan *p;
  int n, gpu;
  const tfe_prims_backend *be;
  const tfe_dyn *in, *out;   /* host */
  tfe_dyn *din, *dout;       /* device copies (gpu >= 0) */
  bool transfers;
} runner;
static tfe_status run_once(runner *r) {
  if (g_prof) g_prof->carry = 0;
  if (r->gpu < 0) return exec_any(NULL, r->dt, r->p, r->n, r->in, r->out);
  if (!r->transfers) {
    tfe_status st = exec_any(r->be, r->dt, r->p, r->n, r->din, r->dout);
    return st == TFE_OK ? tfe_gpu_synchronize(r->gpu) : st;
  }
  /* upload every input into fresh device memory, contract, download the result */
  tfe_dyn *d = (tfe_dyn *)calloc((size_t)r->n + 1, sizeof *d);
  if (!d) return TFE_ERR_ALLOC;
  tfe_status st = TFE_OK;
  int k = 0;
  for (; k < r->n && st == TFE_OK; k++) st = tfe_gpu_upload(&d[k], r->gpu, &r->in[k]);
  if (st != TFE_OK) k--;
  if (st == TFE_OK) st = exec_any(r->be, r->dt, r->p, r->n, d, r->dout);
  if (st == TFE_OK) st = tfe_gpu_download(r->dout, r->out);
  while (k > 0) tfe_dyn_release(&d[--k]);
  free(d);
  return st;
}

/* `*repeat` timed runs (fewer once they took max_ms; at least one) into ms[]; with warmup one
 * untimed run first, counted as timed when it takes a second or more (the peers' rule). */
static tfe_status time_runs(runner *r, int *repeat, double max_ms, bool warmup, double *ms) {
  tfe_status st = TFE_OK;
  double spent = 0;
  int k = 0;
  if (warmup) {
    double t0 = tfe__now();
    st = run_once(r);
    double w = 1e3 * (tfe__now() - t0);
    progress_next_run(w / 1e3);
    if (w >= 1000) { ms[k++] = w; spent = w; }
  }
  if (g_prof) g_prof->on = true;
  for (; k < *repeat && st == TFE_OK && (k == 0 || spent < max_ms); k++) {
    double t0 = tfe__now();
    st = run_once(r);
    ms[k] = 1e3 * (tfe__now() - t0);
    progress_next_run(ms[k] / 1e3);
    spent += ms[k];
  }
  *repeat = k;
  if (g_prof) g_prof->on = false;
  return st;
}

/* Sum of the real and imaginary parts of every element of a dense host tensor. */
static double checksum(const tfe_dyn *t) {
  int64_t cnt = tfe_layout_numel(&t->lay);
  double acc = 0;
  switch (t->dtype) {
#define SUM_KIND(s, T, R, alg, cplx, flt, DT)                                      \
  case DT:                                                                         \
    for (int64_t e = 0; e < cnt; e++) {                                            \
      R parts[2] = {0, 0};                                                         \
      memcpy(parts, (const T *)t->data + e, sizeof(T));                            \
      acc += (double)parts[0] + (cplx ? (double)parts[1] : 0.0);                   \
    }                                                                              \
    break;
    TFE_KINDS(SUM_KIND)
#undef SUM_KIND
    default: break;
  }
  return acc;
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
  if (rc == 0 && tfe_dtype_get(*dt)->algebra == TFE_ALGEBRA_MAXTIMES) /* the semiring's domain */
    for (int k = 0; k < pr->n; k++) {
      const tfe_dyn *t = &pr->in[k];
      int64_t cnt = tfe_layout_numel(&t->lay), at[TFE_MAX_RANK] = {0};
      for (int64_t e = 0; e < cnt; e++) {
        int64_t off = t->lay.offset;
        for (int i = 0; i < t->lay.rank; i++) off += at[i] * t->lay.strides[i];
        double x = tfe_dtype_get(*dt)->size == 4 ? (double)((const float *)t->data)[off] : ((const double *)t->data)[off];
        if (!(x >= 0))
          return fail(1, "the maxtimes algebra is a semiring on the non-negative reals only, and '%s' holds %g (element %lld); "
                         "take logarithms and use maxplus, or absolute values", a->inputs[k], x, (long long)e);
        for (int i = t->lay.rank - 1; i >= 0 && ++at[i] == t->lay.dims[i]; i--) at[i] = 0;
      }
    }
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
  if (a.gpu >= 0) { /* the GPU first: without one, nothing else is worth doing */
    if (tfe_gpu_init() != TFE_OK) return fail(1, "--device %s: %s", a.device, tfe_last_error());
    int ndev = tfe_gpu_device_count();
    if (a.gpu >= ndev || !tfe_gpu_backend(a.gpu))
      return fail(1, "--device %s: this machine has %d GPU%s (cuda:0 to cuda:%d)", a.device, ndev, ndev == 1 ? "" : "s",
                  ndev - 1);
  }
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
  prof.gpu = a.gpu;
  tfe_dyn out, dout, *din = NULL;
  memset(&out, 0, sizeof out);
  memset(&dout, 0, sizeof dout);
  double *ms_tr = NULL, med_tr = NAN, first_ms = NAN;
  int repeat_tr = 0;
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
  progress_t pg = {0};
  pg.last = -1;

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
  runner run = {dt, plan, pr.n, a.gpu, NULL, pr.in, &out, NULL, NULL, false};
  if (a.gpu >= 0 && !a.plan_only) { /* the inputs on the device once; the result's device tensor */
    run.be = tfe_gpu_backend(a.gpu);
    din = (tfe_dyn *)calloc((size_t)pr.n + 1, sizeof *din);
    ms_tr = (double *)calloc((size_t)a.repeat, sizeof(double));
    if (!din || !ms_tr) { rc = fail(1, "out of memory"); goto done; }
    for (int k = 0; k < pr.n; k++)
      if (tfe_gpu_upload(&din[k], a.gpu, &pr.in[k]) != TFE_OK) { rc = fail(1, "--device %s: %s", a.device, tfe_last_error()); goto done; }
    if (tfe_gpu_alloc_dyn(&dout, a.gpu, dt, out.lay.rank, odims, o.out_order) != TFE_OK) {
      rc = fail(1, "--device %s: %s", a.device, tfe_last_error());
      goto done;
    }
    run.din = din; run.dout = &dout;
  }
  if (a.profile && !a.plan_only) {
    prof.npre = plan->npre; prof.nsteps = plan->nsteps; prof.lays = a.profile_layouts;
    prof.row = (prof_row *)calloc((size_t)(prof.npre + prof.nsteps) + 1, sizeof *prof.row);
    if (!prof.row) { rc = fail(1, "out of memory"); goto done; }
    g_prof = &prof;
    tfe_einsum_set_step_hook(prof_hook, &prof);
  }
  if (a.tree && (rc = print_tree(a.tree, plan, pr.expr, dt, stdout))) goto done;
  if (a.plan_only) a.repeat = 1;
  else {
    /* the progress line and Ctrl-C (the callback is on for both; it costs a call per step) */
    const char *dl = getenv("TFE_PROGRESS_DELAY");
    pg.tty = isatty(STDERR_FILENO);
    pg.draw = !a.quiet && (a.progress || pg.tty);
    pg.delay = a.progress ? 0 : (dl && *dl ? atof(dl) : 1.0);
    pg.runs = a.repeat * (a.gpu >= 0 ? 2 : 1) + (a.warmup ? 1 : 0); /* a GPU: as many runs again with transfers */
    g_progress = &pg;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    tfe_einsum_set_progress(progress_cb, &pg);
    pg.t_runs = tfe__now();
    double max_ms = a.max_time > 0 ? 1e3 * a.max_time : INFINITY;
    tfe_status st = TFE_OK;
    if (a.gpu >= 0) { /* the first run on a device compiles (NVRTC) or loads the kernels it needs: never timed */
      bool on = g_prof != NULL;
      double t0 = tfe__now();
      st = run_once(&run);
      first_ms = 1e3 * (tfe__now() - t0);
      if (on) memset(prof.row, 0, (size_t)(prof.npre + prof.nsteps) * sizeof *prof.row);
    }
    if (st == TFE_OK) st = time_runs(&run, &a.repeat, max_ms, a.warmup, ms);
    if (st == TFE_OK && a.gpu >= 0) { /* the result to the host; then as many runs with the transfers */
      if (g_prof) { tfe_einsum_set_step_hook(NULL, NULL); g_prof = NULL; } /* the profile is of the first runs */
      st = tfe_gpu_download(&dout, &out);
      repeat_tr = a.repeat;
      run.transfers = true;
      if (st == TFE_OK) st = time_runs(&run, &repeat_tr, max_ms, false, ms_tr);
    }
    if (st == TFE_OK) sum = checksum(&out);
    tfe_einsum_set_progress(NULL, NULL);
    progress_clear(&pg);
    g_progress = NULL;
    signal(SIGINT, SIG_DFL);
    if (st == TFE_ERR_CANCELLED && g_interrupted) {
      fprintf(stderr, "tfe-einsum: interrupted (Ctrl-C) after %.2f s: the contraction was cancelled at a step boundary; "
                      "nothing written\n", tfe__now() - pg.t_runs);
      rc = 130;
      goto done;
    }
    if (st != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  }
  if (prof.row && !a.plan_only) {
    if (g_prof) tfe_einsum_set_step_hook(NULL, NULL);
    prof_print(&prof);
    g_prof = NULL;
  }
  /* the output file first: the summary says the run succeeded, so it comes after the write */
  if (a.out && !a.plan_only && tfe_npy_save(a.out, &out) != TFE_OK) { rc = fail(1, "%s", tfe_last_error()); goto done; }
  qsort(ms, (size_t)a.repeat, sizeof *ms, cmp_d);
  double med = a.repeat % 2 ? ms[a.repeat / 2] : 0.5 * (ms[a.repeat / 2 - 1] + ms[a.repeat / 2]);
  if (repeat_tr > 0) {
    qsort(ms_tr, (size_t)repeat_tr, sizeof *ms_tr, cmp_d);
    med_tr = repeat_tr % 2 ? ms_tr[repeat_tr / 2] : 0.5 * (ms_tr[repeat_tr / 2 - 1] + ms_tr[repeat_tr / 2]);
  }

  FILE *so = a.tree ? stderr : stdout; /* with --print-tree the tree has stdout to itself */
  if (a.print_path) {
    const int *pairs;
    int ns = tfe_einsum_plan_path(plan, &pairs);
    fprintf(so, "path:");
    for (int s = 0; s < ns; s++) fprintf(so, " (%d,%d)", pairs[2 * s], pairs[2 * s + 1]);
    fprintf(so, "\nlog10_flops=%.4f log2_size=%.4f max_rank=%d slices=%lld plan_ms=%.1f", cost.log10_flops, cost.log2_size,
            cost.max_rank, (long long)cost.slices, plan_ms);
    if (!isnan(ref_flops))
      fprintf(so, " opt_flops_path_log10_flops=%.4f (instance file: %.4f) ratio=%.4f", log10(ref_flops), inst_l10,
              cost.flops / ref_flops);
    fprintf(so, "\n");
  }
  fprintf(so, "name=%s dtype=%s device=%s threads=%d path=%s median_ms=%.3f runs=%d", pr.name, tfe_dtype_name(dt), a.device,
          a.threads, a.path, med, a.repeat);
  if (repeat_tr > 0) fprintf(so, " median_ms_transfers=%.3f first_ms=%.3f", med_tr, first_ms);
  fprintf(so, " plan_ms=%.1f log10_flops=%.4f log2_size=%.4f slices=%lld", plan_ms, cost.log10_flops, cost.log2_size,
          (long long)cost.slices);
  if (!isnan(ref_flops)) fprintf(so, " flops_vs_opt_flops=%.4f", cost.flops / ref_flops);
  fprintf(so, " checksum=%.10g\n", sum);
done:
  if (plan) tfe_einsum_plan_release(plan);
  tfe_storage_release(out.st);
  for (int k = 0; pr.in && k < pr.n; k++) tfe_storage_release(pr.in[k].st);
  for (int k = 0; din && k < pr.n; k++) tfe_dyn_release(&din[k]);
  if (dout.st) tfe_dyn_release(&dout);
  free(din); free(ms_tr);
  if (g_prof) tfe_einsum_set_step_hook(NULL, NULL);
  for (int r = 0; prof.row && r < prof.npre + prof.nsteps; r++) free(prof.row[r].lays);
  free(prof.row);
  free(pr.in); free(pr.expr); free(lay); free(ms); free(given);
  tfe_json_free(&pr.doc);
  return rc;
}
