/* tests/test_npy.c — .npy round trips (every dtype, C/Fortran order, strided, conjugated),
 * bad files, the JSON reader, and the tfe-einsum tool's error lines and exit codes. */
#include "testutil.h"
#include <stdio.h>
#include <sys/wait.h>

static const char *TMP = "build/test_npy_tmp.npy";

/* Round trip of a random strided view of each dtype. */
static void test_roundtrip(void **state) {
  (void)state;
  tu_rng g = {99};
  const tfe_dtype dts[] = {TFE_DT_F32, TFE_DT_F64, TFE_DT_C64, TFE_DT_C128, TFE_DT_I32, TFE_DT_I64, TFE_DT_MAXPLUS_F64};
  for (int c = 0; c < tu_cases(200); c++) {
    tfe_dtype dt = dts[c % 7];
    size_t sz = tfe_dtype_get(dt)->size;
    int r = (int)tu_int(&g, 0, 4);
    int64_t dims[4];
    for (int i = 0; i < r; i++) dims[i] = tu_int(&g, 0, 4);
    tfe_layout L;
    int mode = (int)tu_int(&g, 0, 2); /* 0 column-major, 1 row-major, 2 reversed strides (gathered) */
    tfe_layout_dense(r, dims, mode == 1 ? TFE_ROWMAJOR : TFE_COLMAJOR, &L);
    if (mode == 2)
      for (int i = 0; i < r; i++) if (dims[i] > 1) { L.offset += (dims[i] - 1) * L.strides[i]; L.strides[i] = -L.strides[i]; }
    int64_t n = tfe_layout_numel(&L);
    unsigned char *buf = (unsigned char *)malloc((size_t)(n + 1) * sz);
    for (int64_t e = 0; e < (n + 1) * (int64_t)sz; e++) buf[e] = (unsigned char)tu_int(&g, 0, 255);
    bool cj = tfe_dtype_get(dt)->is_complex && tu_int(&g, 0, 1);
    tfe_dyn t = {dt, buf, L, cj, NULL}, u;
    assert_int_equal(tfe_npy_save(TMP, &t), TFE_OK);
    assert_int_equal(tfe_npy_load(TMP, &u), TFE_OK);
    tfe_dtype want = dt == TFE_DT_MAXPLUS_F64 ? TFE_DT_F64 : dt;
    assert_int_equal(u.dtype, want);
    assert_int_equal(u.lay.rank, r);
    /* element by element through both layouts */
    int64_t idx[4] = {0};
    for (int64_t e = 0; e < n; e++) {
      int64_t a = L.offset, b = u.lay.offset;
      for (int i = 0; i < r; i++) { a += idx[i] * L.strides[i]; b += idx[i] * u.lay.strides[i]; }
      unsigned char x[16];
      memcpy(x, buf + a * (int64_t)sz, sz);
      if (cj) { if (sz == 16) ((double *)x)[1] = -((double *)x)[1]; else ((float *)x)[1] = -((float *)x)[1]; }
      if (memcmp(x, (unsigned char *)u.data + b * (int64_t)sz, sz) != 0)
        fail_msg("element %lld differs (dtype %s, mode %d)", (long long)e, tfe_dtype_name(dt), mode);
      for (int i = 0; i < r; i++) { if (++idx[i] < dims[i]) break; idx[i] = 0; }
    }
    /* dense views are written in their own order: no transposition on load */
    if (mode < 2 && r > 1 && !cj) {
      bool rowmajor_file = u.lay.strides[r - 1] == 1 && dims[r - 1] > 1 && u.lay.strides[0] != 1;
      if (mode == 1 && dims[0] > 1 && dims[r - 1] > 1) assert_true(rowmajor_file);
    }
    tfe_storage_release(u.st);
    free(buf);
  }
  remove(TMP);
}

static void write_bytes(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(b, 1, n, f);
  fclose(f);
}
/* A header with a given dictionary (padded like numpy). */
static size_t make_npy(unsigned char *out, const char *dict, size_t data_bytes) {
  size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64, hl = total - 10;
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (unsigned char)(hl & 0xFF); out[9] = (unsigned char)(hl >> 8);
  memcpy(out + 10, dict, dl);
  memset(out + 10 + dl, ' ', hl - dl - 1);
  out[total - 1] = '\n';
  memset(out + total, 0, data_bytes);
  return total + data_bytes;
}

static void test_bad_files(void **state) {
  (void)state;
  unsigned char b[512];
  tfe_dyn t;
  TU_EXPECT_ERR(tfe_npy_load_mem("hello", 5, &t), TFE_ERR_PARSE, "not a .npy file (bad magic)");
  size_t n = make_npy(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", 8 * 11);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_IO, "the header needs 96 (truncated?)");
  n = make_npy(b, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 6);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_UNSUPPORTED, "unsupported dtype '<f2'");
  n = make_npy(b, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "structured arrays are not supported");
  n = make_npy(b, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,), }", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "fortran_order is not True or False");
  n = make_npy(b, "{'descr': '<f8', 'shape': (3,), }", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "header lacks 'fortran_order'");
  n = make_npy(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "bad dimension in shape");
  n = make_npy(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_OVERFLOW, "overflows");
  n = make_npy(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "unknown header key 'extra'");
  /* found by the fuzzer: a second 'shape' used to append its dims to the first's */
  n = make_npy(b, "{'descr': '>c8', 'fortran_order': True, 'shape': (5, 2), 'shape': (1, 2), }", 80);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "header repeats the key 'shape'");
  n = make_npy(b, "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 24);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, n, &t), TFE_ERR_PARSE, "header repeats the key 'descr'");
  memcpy(b, "\x93NUMPY\x05\x00", 8);
  TU_EXPECT_ERR(tfe_npy_load_mem(b, 64, &t), TFE_ERR_PARSE, "unsupported format version 5.0");
  TU_EXPECT_ERR(tfe_npy_load("/nonexistent/x.npy", &t), TFE_ERR_IO, "cannot open '/nonexistent/x.npy'");
  /* a big-endian file is byte-swapped; a 0-d array works */
  n = make_npy(b, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", 8);
  b[n - 8 + 3] = 7; b[n - 4 + 2] = 1;
  assert_int_equal(tfe_npy_load_mem(b, n, &t), TFE_OK);
  assert_int_equal(((int32_t *)t.data)[0], 7);
  assert_int_equal(((int32_t *)t.data)[1], 256);
  tfe_storage_release(t.st);
  n = make_npy(b, "{'descr': '<f8', 'fortran_order': True, 'shape': (), }", 8);
  assert_int_equal(tfe_npy_load_mem(b, n, &t), TFE_OK);
  assert_int_equal(t.lay.rank, 0);
  tfe_storage_release(t.st);
  tfe_dyn bad = {TFE_DT_MAXPLUS_F32, b, {0}, false, NULL};
  bad.dtype = (tfe_dtype)77;
  TU_EXPECT_ERR(tfe_npy_save(TMP, &bad), TFE_ERR_DTYPE, "cannot be stored in .npy");
  /* allocation failure: clean error, nothing leaked */
  n = make_npy(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24);
  tu_fail_after(0);
  tfe_status st = tfe_npy_load_mem(b, n, &t);
  tu_alloc_restore();
  assert_int_equal(st, TFE_ERR_ALLOC);
}

static void test_json(void **state) {
  (void)state;
  const char *txt = "{\"name\": \"x\\u00c1\\ud83d\\ude00\", \"a\": [1, -2.5e3, [true, false, null]], \"o\": {}}";
  tfe_json j;
  assert_int_equal(tfe_json_parse(txt, strlen(txt), &j), TFE_OK);
  int nm = tfe_json_get(&j, 0, "name");
  assert_string_equal(j.nodes[nm].str, "x\xc3\x81\xf0\x9f\x98\x80");
  int a = tfe_json_get(&j, 0, "a");
  assert_int_equal(j.nodes[a].count, 3);
  assert_true(j.nodes[tfe_json_at(&j, a, 1)].num == -2500);
  assert_int_equal(j.nodes[tfe_json_at(&j, tfe_json_at(&j, a, 2), 2)].type, TFE_JSON_NULL);
  assert_int_equal(tfe_json_get(&j, 0, "missing"), -1);
  tfe_json_free(&j);
  static const struct { const char *t, *msg; } bad[] = {
      {"{\"a\" 1}", "expected ':' at line 1 column 6"}, {"[1, 2", "expected ',' or ']'"}, {"\"abc", "unterminated string"},
      {"[01]", "expected ',' or ']'"}, {"{\"a\":1}x", "trailing characters"}, {"\"\\ud800\"", "unpaired surrogate"},
      {"[1.]", "bad fraction"}, {"\n\n  @", "bad number at line 3 column 3"}, {"\"a\x01\"", "control character in string"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    TU_EXPECT_ERR(tfe_json_parse(bad[i].t, strlen(bad[i].t), &j), TFE_ERR_PARSE, bad[i].msg);
  char deep[2000];
  memset(deep, '[', 1000); deep[1000] = 0;
  TU_EXPECT_ERR(tfe_json_parse(deep, 1000, &j), TFE_ERR_PARSE, "nesting too deep");
}

/* The tool: one clear stderr line and a non-zero exit for each bad input. */
/* The tfe-einsum binary under test: $TFE_TOOL (set by `make test`), else build/tfe-einsum. */
static const char *tool_path(void) {
  const char *t = getenv("TFE_TOOL");
  return t && *t ? t : "build/tfe-einsum";
}
static int run_tool(const char *args, char *err, size_t cap) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s 2>build/tool_err.txt >build/tool_out.txt", tool_path(), args);
  int rc = system(cmd);
  FILE *f = fopen("build/tool_err.txt", "r");
  size_t n = f ? fread(err, 1, cap - 1, f) : 0;
  if (f) fclose(f);
  err[n] = 0;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
static void test_tool(void **state) {
  (void)state;
  FILE *probe = fopen(tool_path(), "rb");
  if (!probe && getenv("TFE_TOOL")) fail_msg("TFE_TOOL=%s does not exist", getenv("TFE_TOOL"));
  if (!probe) { skip(); return; } /* `make test` sets TFE_TOOL and builds the tool first */
  fclose(probe);
  double a[6] = {1, 2, 3, 4, 5, 6};
  int64_t d[2] = {2, 3};
  tfe_dyn t = {TFE_DT_F64, a, {0}, false, NULL};
  tfe_layout_dense(2, d, TFE_ROWMAJOR, &t.lay);
  assert_int_equal(tfe_npy_save("build/tool_a.npy", &t), TFE_OK);
  t.dtype = TFE_DT_F32;
  float af[6] = {0};
  t.data = af;
  assert_int_equal(tfe_npy_save("build/tool_f.npy", &t), TFE_OK);
  write_bytes("build/tool_bad.npy", "garbage", 7);
  static const struct { const char *args; int rc; const char *msg; } cases[] = {
      {"'ij,jk->ik' build/tool_a.npy build/tool_a.npy -o build/tool_o.npy", 1, "label 'j' has size 2 in operand 1 (axis 0) but 3 elsewhere"},
      {"'ij,jk->i-k' build/tool_a.npy build/tool_a.npy -o build/tool_o.npy", 1, "'-' not followed by '>' at column 9"},
      {"'ij->ij' build/tool_bad.npy -o build/tool_o.npy", 1, "not a .npy file (bad magic)"},
      {"'ij->ij' build/missing.npy -o build/tool_o.npy", 1, "cannot open 'build/missing.npy'"},
      {"'ij,ij->ij' build/tool_a.npy build/tool_f.npy -o build/tool_o.npy", 1, "'build/tool_f.npy' is f32 but 'build/tool_a.npy' is f64"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --bogus", 2, "unknown option '--bogus'"},
      {"'ij->ij' build/tool_a.npy", 2, "no output file given"},
      {"--instance data/str_nw_mera_open_26.json --dtype f16", 2, "unknown dtype 'f16'"},
      {"--instance data/str_nw_mera_open_26.json --algebra maxplus --dtype c128", 2, "needs a real dtype"},
      {"--instance data/str_nw_mera_open_26.json --path magic", 2, "unknown path 'magic'"},
      {"--instance build/missing.json", 1, "cannot read instance 'build/missing.json'"},
      {"--instance build/tool_bad.npy", 1, "tfe_json"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --threads 0", 2, "--threads wants a positive integer"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --write-weight -1", 2, "--write-weight wants a non-negative number"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --path instance:opt_flops", 2, "needs --instance"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device gpu", 2, "--device wants cpu or cuda:N"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device cuda:", 2, "got 'cuda:'"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device cuda:-1", 2, "got 'cuda:-1'"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device cuda:+0", 2, "got 'cuda:+0'"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device 'cuda: 0'", 2, "--device wants cpu or cuda:N"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device cuda:0x", 2, "got 'cuda:0x'"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device CPU", 2, "got 'CPU'"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device", 2, "option --device needs a value"},
      {"'ij->ij' build/tool_a.npy -o build/tool_o.npy --device cuda:1023", 1, "--device cuda:1023: "}, /* no GPU, or too few */
  };
  char err[2048];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = run_tool(cases[i].args, err, sizeof err);
    if (rc != cases[i].rc || !strstr(err, cases[i].msg) || strncmp(err, "tfe-einsum: error: ", 19) != 0 ||
        strchr(err, '\n') != err + strlen(err) - 1)
      fail_msg("tool %s: rc %d, stderr '%s' (want rc %d and '%s')", cases[i].args, rc, err, cases[i].rc, cases[i].msg);
  }
  /* a good run: the output file holds A * A^T */
  assert_int_equal(run_tool("'ij,kj->ik' build/tool_a.npy build/tool_a.npy -o build/tool_o.npy", err, sizeof err), 0);
  tfe_dyn o;
  assert_int_equal(tfe_npy_load("build/tool_o.npy", &o), TFE_OK);
  assert_true(((double *)o.data)[0] == 14 && ((double *)o.data)[3] == 77);
  tfe_storage_release(o.st);
  /* --device cpu: the default, said in the summary */
  remove("build/tool_o.npy");
  assert_int_equal(run_tool("'ij,kj->ik' build/tool_a.npy build/tool_a.npy -o build/tool_o.npy --device cpu", err, sizeof err), 0);
  assert_int_equal(tfe_npy_load("build/tool_o.npy", &o), TFE_OK);
  assert_true(((double *)o.data)[0] == 14 && ((double *)o.data)[3] == 77);
  tfe_storage_release(o.st);
  FILE *so = fopen("build/tool_out.txt", "r");
  char line[1024] = "";
  assert_non_null(so);
  assert_non_null(fgets(line, sizeof line, so));
  fclose(so);
  if (!strstr(line, " device=cpu ") || strstr(line, "median_ms_transfers")) fail_msg("--device cpu: summary '%s'", line);
  /* --device cuda:0: without a GPU one line saying why (exit 1, no output file); with one, the
   * same result computed there, and the median with transfers in the summary */
  remove("build/tool_o.npy");
  int rc = run_tool("'ij,kj->ik' build/tool_a.npy build/tool_a.npy -o build/tool_o.npy --device cuda:0 --repeat 2", err, sizeof err);
  if (rc == 1) {
    if (!strstr(err, "tfe-einsum: error: --device cuda:0: ") || !strstr(err, "no GPU") || strchr(err, '\n') != err + strlen(err) - 1)
      fail_msg("--device cuda:0 without a GPU: '%s'", err);
    assert_null(fopen("build/tool_o.npy", "rb"));
  } else {
    if (rc != 0) fail_msg("--device cuda:0: rc %d, '%s'", rc, err);
    assert_int_equal(tfe_npy_load("build/tool_o.npy", &o), TFE_OK);
    assert_true(((double *)o.data)[0] == 14 && ((double *)o.data)[3] == 77);
    tfe_storage_release(o.st);
    so = fopen("build/tool_out.txt", "r");
    assert_non_null(so);
    assert_non_null(fgets(line, sizeof line, so));
    fclose(so);
    if (!strstr(line, " device=cuda:0 ") || !strstr(line, " median_ms_transfers=")) fail_msg("--device cuda:0: summary '%s'", line);
  }
  /* --profile: a per-step table on stderr, one row per pairwise step */
  assert_int_equal(run_tool("'ij,jk,kl->il' build/tool_a.npy build/tool_a.npy build/tool_a.npy -o build/tool_o.npy --profile"
                            " --repeat 3", err, sizeof err), 1); /* 2x3 . 2x3: sizes clash */
  assert_int_equal(run_tool("'ij,kj,kl->il' build/tool_a.npy build/tool_a.npy build/tool_a.npy -o build/tool_o.npy --profile"
                            " --repeat 3", err, sizeof err), 0);
  assert_non_null(strstr(err, "profile: mean of 3 timed run(s)"));
  assert_non_null(strstr(err, "contract"));
  int rows = 0;
  for (const char *q = strstr(err, "GFLOP/s"); q && (q = strchr(q, '\n')) && q[1]; q++) rows++;
  assert_int_equal(rows, 2);
  assert_int_equal(run_tool("'ij,kj,kl->il' build/tool_a.npy build/tool_a.npy build/tool_a.npy -o build/tool_o.npy"
                            " --profile-layouts", err, sizeof err), 0);
  assert_non_null(strstr(err, "] C[")); /* each row followed by its views, label:dim/stride */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_bad_files),
                                     cmocka_unit_test(test_json), cmocka_unit_test(test_tool)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
