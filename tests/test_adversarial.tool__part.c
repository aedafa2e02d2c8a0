/* tests/test_adversarial.tool__part.c — tfe-einsum against bad input: one clear error line and
 * exit status 1 (usage: 2), no crash, no summary on stdout and no file left after a failure. The
 * tool is $TFE_TOOL (set by `make test`), else build/tfe-einsum. No tenferro here: this unit
 * only runs the program. */
#define _GNU_SOURCE /* forkpty, kill, setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

void adv_test_tool(void **state);
void adv_test_tool_args(void **state);
void adv_test_tool_terminal(void **state);

static const char *tool(void) {
  const char *t = getenv("TFE_TOOL");
  return t && *t ? t : "build/tfe-einsum";
}
/* Runs `prefix tool args`; stderr and stdout into err / out. Returns the exit status. */
static int run(const char *prefix, const char *args, char *err, char *out, size_t cap) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s %s 2>build/adv_err.txt >build/adv_out.txt", prefix, tool(), args);
  int rc = system(cmd);
  char *dst[2] = {err, out};
  const char *src[2] = {"build/adv_err.txt", "build/adv_out.txt"};
  for (int q = 0; q < 2; q++) {
    FILE *f = fopen(src[q], "r");
    size_t n = f ? fread(dst[q], 1, cap - 1, f) : 0;
    if (f) fclose(f);
    dst[q][n] = 0;
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
static void put(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, len, f), len);
  fclose(f);
}
static bool exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

void adv_test_tool(void **state) {
  (void)state;
  if (!exists(tool())) {
    if (getenv("TFE_TOOL")) fail_msg("TFE_TOOL=%s does not exist", getenv("TFE_TOOL"));
    skip();
  }
  const char *good = "{\"name\": \"t\", \"format_string\": \"ab,bc->ac\", \"shapes\": [[40, 50], [50, 60]]";
  char buf[1024];
  snprintf(buf, sizeof buf, "%s}", good);
  put("build/adv_ok.json", buf, strlen(buf));
  /* the shape product fits int64, times 8 bytes it wraps */
  const char *wrap = "{\"format_string\": \"ab->ab\", \"shapes\": [[2147483648, 2147483648]]}";
  put("build/adv_wrap.json", wrap, strlen(wrap));
  const char nul[] = "{\"format_string\": \"ab\\u0000,bc->ac\", \"shapes\": [[2, 3], [3, 4]]}";
  put("build/adv_nul.json", nul, strlen(nul));
  const char raw_nul[] = "{\"format_string\": \"ab,bc->ac\"\0, \"shapes\": [[2, 3], [3, 4]]}";
  put("build/adv_rawnul.json", raw_nul, sizeof raw_nul - 1);
  const char *paths[] = {"[[0, \"x\"]]", "[[0, 1e300]]", "[[0.5, 1]]", "[[0, -1]]", "[[0]]", "7"};
  for (int i = 0; i < 6; i++) {
    char name[64];
    snprintf(name, sizeof name, "build/adv_path%d.json", i);
    snprintf(buf, sizeof buf, "%s, \"paths\": {\"opt_flops\": {\"path\": %s, \"log10_flops\": 1}}}", good, paths[i]);
    put(name, buf, strlen(buf));
  }
  static const struct { const char *args; int rc; const char *msg; } cases[] = {
      {"--instance build/adv_wrap.json", 1, "overflow the byte count"},
      {"--instance build/adv_nul.json", 1, "holds a NUL character"},
      {"--instance build/adv_rawnul.json", 1, "holds a NUL byte"},
      {"--instance build", 1, "cannot read instance 'build': Is a directory"},
      {"'ab->ab' build -o build/adv_o.npy", 1, "cannot read 'build' (Is a directory)"},
      {"--instance build/adv_path0.json", 1, "step 0 is not a pair of operand positions"},
      {"--instance build/adv_path1.json", 1, "step 0 is not a pair of operand positions"},
      {"--instance build/adv_path2.json", 1, "step 0 is not a pair of operand positions"},
      {"--instance build/adv_path3.json", 1, "step 0 is not a pair of operand positions"},
      {"--instance build/adv_path4.json", 1, "step 0 is not a pair"},
      {"--instance build/adv_path5.json", 1, "has no paths.opt_flops.path"},
      {"--instance build/adv_path0.json --path instance:opt_flops", 1, "not a pair of operand positions"},
      {"--instance build/adv_ok.json --time-budget inf", 2, "--time-budget wants finite seconds"},
      {"--instance build/adv_ok.json --time-budget nan", 2, "--time-budget wants finite seconds"},
      {"--instance build/adv_ok.json --time-budget 1e30", 2, "in [0, 86400]"},
      {"--instance build/adv_ok.json --max-time inf", 2, "--max-time wants finite seconds"},
      {"--instance build/adv_ok.json --write-weight inf", 2, "--write-weight wants a non-negative number"},
      {"--instance build/adv_ok.json --memory-limit -5", 2, "--memory-limit wants a byte count"},
      {"--instance build/adv_ok.json --threads 99999999999", 2, "--threads wants a positive integer"},
  };
  char err[4096], out[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = run("", cases[i].args, err, out, sizeof err);
    if (rc != cases[i].rc || !strstr(err, cases[i].msg) || strncmp(err, "tfe-einsum: error: ", 19) != 0 ||
        strchr(err, '\n') != err + strlen(err) - 1 || strstr(err, "tfe__") || out[0])
      fail_msg("tool %s: rc %d, stderr '%s', stdout '%s' (want rc %d and '%s')", cases[i].args, rc, err, out,
               cases[i].rc, cases[i].msg);
  }
  /* a good instance runs; far too many threads: a warning and a capped count */
  assert_int_equal(run("", "--instance build/adv_ok.json --threads 1000", err, out, sizeof err), 0);
  assert_non_null(strstr(err, "warning: --threads 1000 is far above"));
  assert_non_null(strstr(out, "checksum="));
  /* a failed write: exit 1, no summary, the old file kept, no temporary left. The file size
   * limit (ulimit -f, in blocks) fails the write half-way; SIGXFSZ ignored so write() says EFBIG. */
  assert_int_equal(run("", "--instance build/adv_ok.json --save-inputs build", err, out, sizeof err), 0);
  put("build/adv_big.npy", "OLD", 3);
  int rc = run("trap '' XFSZ; ulimit -f 8;", "'ab,bc->ac' build/in0.npy build/in1.npy -o build/adv_big.npy", err, out,
               sizeof err);
  if (rc != 1 || out[0] || !strstr(err, "write to 'build/adv_big.npy' failed"))
    fail_msg("failed write: rc %d, stderr '%s', stdout '%s'", rc, err, out);
  FILE *f = fopen("build/adv_big.npy", "rb");
  char got[8] = {0};
  assert_non_null(f);
  assert_int_equal(fread(got, 1, sizeof got, f), 3);
  fclose(f);
  assert_string_equal(got, "OLD");
  assert_int_equal(system("ls build | grep -q 'adv_big.npy.tfe-tmp-'"), 256); /* grep found nothing */
  rc = run("", "'ab,bc->ac' build/in0.npy build/in1.npy -o build/no_such_dir/o.npy", err, out, sizeof err);
  if (rc != 1 || out[0] || !strstr(err, "cannot write 'build/no_such_dir/o.npy'"))
    fail_msg("missing folder: rc %d, stderr '%s', stdout '%s'", rc, err, out);
  assert_false(exists("build/no_such_dir"));
}

/* ---- argument handling: every numpy.einsum expression, "--", threads, maxtimes' domain, trees ---------- */
static bool has(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }
void adv_test_tool_args(void **state) {
  (void)state;
  if (!exists(tool())) skip();
  char err[8192], out[8192];
  /* inputs: two matrices (from an instance), two scalars, a vector */
  const char *mats = "{\"format_string\": \"ab,bc->ac\", \"shapes\": [[4, 5], [5, 3]]}";
  put("build/adv_mats.json", mats, strlen(mats));
  const char *scal = "{\"format_string\": \",->\", \"shapes\": [[], []]}";
  put("build/adv_scal.json", scal, strlen(scal));
  assert_int_equal(system("mkdir -p build/adv_m build/adv_s"), 0);
  assert_int_equal(run("", "--instance build/adv_mats.json --save-inputs build/adv_m", err, out, sizeof err), 0);
  assert_int_equal(run("", "--instance build/adv_scal.json --save-inputs build/adv_s", err, out, sizeof err), 0);
  if (!has(out, "checksum=")) fail_msg("scalar instance: %s %s", out, err);
  static const struct { const char *args; const char *want; } ok[] = {
      {"'->' build/adv_s/in0.npy -o build/adv_o.npy", "name=cli"},               /* starts with '-', no "--" */
      {"-o build/adv_o.npy -- '->' build/adv_s/in0.npy", "name=cli"},            /* after "--" */
      {"',->' build/adv_s/in0.npy build/adv_s/in1.npy -o build/adv_o.npy", "name=cli"},
      {"',' build/adv_s/in0.npy build/adv_s/in1.npy -o build/adv_o.npy", "name=cli"}, /* implicit: scalar */
      {"-o build/adv_o.npy -- ',->' build/adv_s/in0.npy build/adv_s/in1.npy", "name=cli"},
      {"'ab->' build/adv_m/in0.npy -o build/adv_o.npy", "name=cli"},
      {"'ab,bc' build/adv_m/in0.npy build/adv_m/in1.npy -o build/adv_o.npy", "name=cli"},
      {"'ab,bc->' build/adv_m/in0.npy build/adv_m/in1.npy -o build/adv_o.npy", "name=cli"},
      {"'...,...->...' build/adv_s/in0.npy build/adv_s/in1.npy -o build/adv_o.npy", "name=cli"},
      {"'->' build/adv_s/in0.npy -o build/adv_o.npy --threads 1", "threads=1"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    int rc = run("", ok[i].args, err, out, sizeof err);
    if (rc != 0 || !has(out, ok[i].want) || !has(out, "checksum=")) fail_msg("tool %s: rc %d, stderr '%s', stdout '%s'", ok[i].args, rc, err, out);
  }
  /* the product of two scalars: checksum = x * y */
  assert_int_equal(run("", "',->' build/adv_s/in0.npy build/adv_s/in1.npy -o build/adv_o.npy", err, out, sizeof err), 0);
  double c1 = atof(strstr(out, "checksum=") + 9);
  assert_int_equal(run("", "'->' build/adv_s/in0.npy -o build/adv_o.npy", err, out, sizeof err), 0);
  double x = atof(strstr(out, "checksum=") + 9);
  assert_int_equal(run("", "'->' build/adv_s/in1.npy -o build/adv_o.npy", err, out, sizeof err), 0);
  double y = atof(strstr(out, "checksum=") + 9);
  if (!(c1 == c1 && x * y - c1 < 1e-9 && c1 - x * y < 1e-9)) fail_msg("scalar product %g, want %g * %g", c1, x, y);
  /* usage errors: an unknown option still is one; after "--" an option is an operand */
  static const struct { const char *args; int rc; const char *msg; } bad[] = {
      {"-x build/adv_s/in0.npy -o build/adv_o.npy", 2, "unknown option '-x'"},
      {"-- '->' build/adv_s/in0.npy -o build/adv_o.npy", 2, "no output file given"},
      {"'->' -o build/adv_o.npy", 2, "no input files given"},
      {"--print-tree svg --instance build/adv_mats.json", 2, "--print-tree wants dot or json"},
      {"--progress --quiet --instance build/adv_mats.json", 2, "contradict"},
      {"'->' build/adv_m/in0.npy -o build/adv_o.npy", 1, "tfe_einsum"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = run("", bad[i].args, err, out, sizeof err);
    if (rc != bad[i].rc || !has(err, bad[i].msg) || out[0]) fail_msg("tool %s: rc %d, stderr '%s'", bad[i].args, rc, err);
  }
  /* threads: the cores this process may use (affinity), OMP_NUM_THREADS when set; stated */
  assert_int_equal(run("env -u OMP_NUM_THREADS taskset -c 0", "--instance build/adv_mats.json", err, out, sizeof err), 0);
  if (!has(out, "threads=1 ")) fail_msg("one allowed core: %s", out);
  long ncpu = -1; /* the affinity mask's count, as nproc sees it */
  FILE *np = popen("env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc", "r");
  if (np && fscanf(np, "%ld", &ncpu) != 1) ncpu = -1;
  if (np) pclose(np);
  char want[64];
  snprintf(want, sizeof want, "threads=%ld ", ncpu > 1024 ? 1024 : ncpu);
  assert_int_equal(run("env -u OMP_NUM_THREADS", "--instance build/adv_mats.json", err, out, sizeof err), 0);
  if (ncpu >= 1 && !has(out, want)) fail_msg("all cores (%ld): %s", ncpu, out);
  assert_int_equal(run("OMP_NUM_THREADS=3", "--instance build/adv_mats.json", err, out, sizeof err), 0);
  if (!has(out, "threads=3 ")) fail_msg("OMP_NUM_THREADS=3: %s", out);
  /* maxtimes: non-negative inputs only (the instance's inputs lie in [-1, 1)) */
  int rc = run("", "'ab,bc->ac' build/adv_m/in0.npy build/adv_m/in1.npy -o build/adv_mt.npy --algebra maxtimes", err, out,
               sizeof err);
  if (rc != 1 || !has(err, "non-negative reals only") || out[0] || exists("build/adv_mt.npy"))
    fail_msg("maxtimes on negative input: rc %d, stderr '%s'", rc, err);
  assert_int_equal(run("", "--instance build/adv_mats.json --algebra maxtimes", err, out, sizeof err), 0); /* [0, 1) */
  /* trees: JSON and dot on stdout, the summary on stderr */
  rc = run("", "--instance build/adv_mats.json --print-tree json --plan-only", err, out, sizeof err);
  if (rc != 0 || !has(out, "\"schema\": \"tenferro-einsum-tree/1\"") || !has(out, "\"kind\": \"contract\"") ||
      !has(out, "\"memory_order\"") || !has(out, "\"share\": 1.000000") || !has(err, "checksum=") || has(out, "checksum="))
    fail_msg("--print-tree json: rc %d, stdout '%s', stderr '%s'", rc, out, err);
  rc = run("", "--instance build/adv_mats.json --print-tree dot", err, out, sizeof err);
  if (rc != 0 || strncmp(out, "digraph contraction {", 21) || !has(out, "n0 -> n2;") || !has(err, "checksum="))
    fail_msg("--print-tree dot: rc %d, stdout '%s', stderr '%s'", rc, out, err);
  if (system("command -v dot >/dev/null 2>&1") == 0) { /* Graphviz renders it */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --instance build/adv_mats.json --plan-only --print-tree dot 2>/dev/null | dot -Tsvg | grep -q '</svg>'", tool());
    assert_int_equal(system(cmd), 0);
  }
}

/* ---- a real terminal: the progress line, --quiet, Ctrl-C ----------------------------------------------- */
/* Runs the tool on a pseudo-terminal (stdin, stdout, stderr: its controlling terminal) with
 * TFE_PROGRESS_DELAY=0; with ctrl_c, types Ctrl-C once the progress line shows. Everything the
 * terminal received goes to buf. Returns the exit status (128 + signal for a signal). */
static int run_pty(const char *args, bool ctrl_c, char *buf, size_t cap) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "exec %s %s", tool(), args);
  int master = -1;
  struct winsize ws = {24, 100, 0, 0};
  pid_t pid = forkpty(&master, NULL, NULL, &ws);
  if (pid < 0) fail_msg("forkpty: %s", strerror(errno));
  if (pid == 0) {
    setenv("TFE_PROGRESS_DELAY", "0", 1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  size_t n = 0;
  bool sent = false;
  time_t t0 = time(NULL);
  for (;;) {
    struct pollfd p = {master, POLLIN, 0};
    if (time(NULL) - t0 > 60) { kill(pid, SIGKILL); break; }
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t got = read(master, buf + n, cap - 1 - n);
    if (got <= 0) break; /* EIO: the child is gone */
    n += (size_t)got;
    buf[n] = 0;
    if (ctrl_c && !sent && strstr(buf, "% ") && strstr(buf, "step ")) {
      assert_int_equal(write(master, "\x03", 1), 1); /* the terminal's interrupt character */
      sent = true;
    }
    if (n + 1 >= cap) n = 0; /* keep reading; the tail matters */
  }
  buf[n] = 0;
  close(master);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
void adv_test_tool_terminal(void **state) {
  (void)state;
  if (!exists(tool())) skip();
  static char buf[1 << 16];
  char err[8192], out[8192];
  const char *mid = "{\"name\": \"mid\", \"format_string\": \"ab,bc,cd,de->ae\", \"shapes\": [[60, 70], [70, 80], [80, 70], [70, 60]]}";
  put("build/adv_mid.json", mid, strlen(mid));
  /* a terminal: the bar, redrawn in place, erased before the summary */
  int rc = run_pty("--instance build/adv_mid.json --repeat 30 --path greedy", false, buf, sizeof buf);
  if (rc != 0 || !has(buf, "\r[") || !has(buf, "%  step ") || !has(buf, " elapsed  ~") || !has(buf, " left") ||
      !has(buf, "run ") || !has(buf, "\r\033[K") || !has(buf, "checksum="))
    fail_msg("progress on a terminal: rc %d, output '%s'", rc, buf);
  /* --quiet: nothing but the summary */
  rc = run_pty("--instance build/adv_mid.json --repeat 30 --path greedy --quiet", false, buf, sizeof buf);
  if (rc != 0 || has(buf, "step ") || has(buf, "\r") != has(buf, "\r\n") || !has(buf, "checksum="))
    fail_msg("--quiet on a terminal: rc %d, output '%s'", rc, buf);
  /* no terminal: no line unless --progress, which writes whole lines */
  assert_int_equal(run("TFE_PROGRESS_DELAY=0", "--instance build/adv_mid.json --repeat 5 --path greedy", err, out, sizeof err), 0);
  if (err[0]) fail_msg("progress without a terminal: '%s'", err);
  assert_int_equal(run("", "--instance build/adv_mid.json --repeat 5 --path greedy --progress", err, out, sizeof err), 0);
  if (!has(err, "] 100.0%  step ") || has(err, "\r") || err[strlen(err) - 1] != '\n')
    fail_msg("--progress into a log: '%s'", err);
  /* Ctrl-C: cancelled at a step boundary, a clear message, status 130, no output file */
  assert_int_equal(run("", "--instance build/adv_mid.json --save-inputs build/adv_m", err, out, sizeof err), 0);
  remove("build/adv_int.npy");
  rc = run_pty("'ab,bc,cd,de->ae' build/adv_m/in0.npy build/adv_m/in1.npy build/adv_m/in2.npy build/adv_m/in3.npy "
               "-o build/adv_int.npy --repeat 100000 --path greedy",
               true, buf, sizeof buf);
  if (rc != 130 || !has(buf, "interrupted (Ctrl-C)") || !has(buf, "nothing written") || has(buf, "checksum=") ||
      exists("build/adv_int.npy"))
    fail_msg("Ctrl-C: rc %d, output '%s'", rc, buf);
}
