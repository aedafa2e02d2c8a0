/* tests/test_adversarial.tool__part.c — tfe-einsum against bad input: one clear error line and
 * exit status 1 (usage: 2), no crash, no summary on stdout and no file left after a failure. The
 * tool is $TFE_TOOL (set by `make test`), else build/tfe-einsum. No tenferro here: this unit
 * only runs the program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

void adv_test_tool(void **state);

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
