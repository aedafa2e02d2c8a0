/* tenferro/io_json.h — a small JSON reader (RFC 8259) for benchmark instances and configs.
 *
 *   tfe_json_parse(text, len, &doc)    a flat node array; node 0 is the root
 *   tfe_json_get(&doc, obj, "key")     member of an object (-1 if absent)
 *   tfe_json_at(&doc, arr, i)          element i of an array (-1 if out of range)
 *   tfe_json_free(&doc)
 * Strings are unescaped into one buffer (UTF-8, \uXXXX with surrogate pairs). Nesting is
 * limited to 512 levels. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_IO_JSON_H
#define TENFERRO_IO_JSON_H

#include <tenferro/core/core.h>

typedef enum tfe_json_type { TFE_JSON_NULL, TFE_JSON_BOOL, TFE_JSON_NUMBER, TFE_JSON_STRING, TFE_JSON_ARRAY, TFE_JSON_OBJECT } tfe_json_type;

typedef struct tfe_json_node {
  tfe_json_type type;
  double num;        /* NUMBER, BOOL (0/1) */
  const char *str;   /* STRING (NUL-terminated) */
  size_t len;
  const char *key;   /* member name inside an object, else NULL */
  int first, next;   /* first child, next sibling (-1: none) */
  int count;         /* children of an ARRAY / OBJECT */
} tfe_json_node;

typedef struct tfe_json {
  tfe_json_node *nodes;
  int n, cap;
  char *strs;        /* unescaped strings */
  size_t slen;
} tfe_json;

#define TFE_JSON_MAX_DEPTH 512

TFE_API void tfe_json_free(tfe_json *j);

typedef struct tfe__jp { const char *s; size_t len, i; tfe_json *j; int depth; } tfe__jp;

/* Parses len bytes of JSON text. */
TFE_API tfe_status tfe_json_parse(const char *text, size_t len, tfe_json *out);
/* Member `key` of object node obj, or -1. */
TFE_API int tfe_json_get(const tfe_json *j, int obj, const char *key);
/* Element i of array node arr, or -1. */
TFE_API int tfe_json_at(const tfe_json *j, int arr, int i);

#endif
#elif !defined(TENFERRO_IO_JSON_BODY) /* bodies */
#define TENFERRO_IO_JSON_BODY
#include <tenferro/core/core.h>
TFE_API void tfe_json_free(tfe_json *j) {
  if (!j) return;
  tfe__free(j->nodes); tfe__free(j->strs);
  memset(j, 0, sizeof *j);
}

TFE_INTERNAL tfe_status tfe__json_err(const tfe__jp *p, const char *what) {
  size_t line = 1, col = 1;
  for (size_t k = 0; k < p->i && k < p->len; k++) { if (p->s[k] == '\n') { line++; col = 1; } else col++; }
  return tfe__fail(TFE_ERR_PARSE, "tfe_json", "%s at line %zu column %zu", what, line, col);
}
TFE_INTERNAL void tfe__json_ws(tfe__jp *p) {
  while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}
TFE_INTERNAL int tfe__json_node(tfe__jp *p, tfe_json_type t) {
  tfe_json *j = p->j;
  if (j->n == j->cap) {
    int cap = j->cap ? 2 * j->cap : 64;
    tfe_json_node *a = (tfe_json_node *)tfe__alloc((size_t)cap * sizeof *a);
    if (!a) return -1;
    if (j->n) memcpy(a, j->nodes, (size_t)j->n * sizeof *a);
    tfe__free(j->nodes); j->nodes = a; j->cap = cap;
  }
  tfe_json_node *nd = &j->nodes[j->n];
  memset(nd, 0, sizeof *nd);
  nd->type = t; nd->first = nd->next = -1;
  return j->n++;
}
TFE_INTERNAL int tfe__json_hex4(const char *s) {
  int v = 0;
  for (int k = 0; k < 4; k++) {
    char c = s[k];
    v = v * 16 + (c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -100000);
  }
  return v < 0 ? -1 : v;
}
/* Unescapes the string at p->i (after the quote) into j->strs; *off gets its offset. */
TFE_INTERNAL tfe_status tfe__json_string(tfe__jp *p, size_t *off, size_t *n) {
  tfe_json *j = p->j;
  *off = j->slen;
  while (p->i < p->len) {
    unsigned char c = (unsigned char)p->s[p->i++];
    if (c == '"') { j->strs[j->slen++] = 0; *n = j->slen - 1 - *off; return TFE_OK; }
    if (c < 0x20) { p->i--; return tfe__json_err(p, "control character in string"); }
    if (c != '\\') { j->strs[j->slen++] = (char)c; continue; }
    if (p->i >= p->len) break;
    char e = p->s[p->i++];
    const char *simple = "\"\\/bfnrt", *val = "\"\\/\b\f\n\r\t";
    const char *hit = strchr(simple, e);
    if (e && hit) { j->strs[j->slen++] = val[hit - simple]; continue; }
    if (e != 'u' || p->i + 4 > p->len) { p->i--; return tfe__json_err(p, "bad escape in string"); }
    int cp = tfe__json_hex4(p->s + p->i);
    if (cp < 0) return tfe__json_err(p, "bad \\u escape");
    p->i += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF) { /* surrogate pair */
      if (p->i + 6 > p->len || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') return tfe__json_err(p, "unpaired surrogate");
      int lo = tfe__json_hex4(p->s + p->i + 2);
      if (lo < 0xDC00 || lo > 0xDFFF) return tfe__json_err(p, "unpaired surrogate");
      p->i += 6;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) return tfe__json_err(p, "unpaired surrogate");
    unsigned v = (unsigned)cp;
    char *o = j->strs + j->slen;
    if (v < 0x80) { o[0] = (char)v; j->slen += 1; }
    else if (v < 0x800) { o[0] = (char)(0xC0 | (v >> 6)); o[1] = (char)(0x80 | (v & 0x3F)); j->slen += 2; }
    else if (v < 0x10000) { o[0] = (char)(0xE0 | (v >> 12)); o[1] = (char)(0x80 | ((v >> 6) & 0x3F)); o[2] = (char)(0x80 | (v & 0x3F)); j->slen += 3; }
    else { o[0] = (char)(0xF0 | (v >> 18)); o[1] = (char)(0x80 | ((v >> 12) & 0x3F)); o[2] = (char)(0x80 | ((v >> 6) & 0x3F)); o[3] = (char)(0x80 | (v & 0x3F)); j->slen += 4; }
  }
  return tfe__json_err(p, "unterminated string");
}
TFE_INTERNAL tfe_status tfe__json_number(tfe__jp *p, double *out) {
  size_t b = p->i;
  if (p->i < p->len && p->s[p->i] == '-') p->i++;
  if (p->i >= p->len || p->s[p->i] < '0' || p->s[p->i] > '9') return tfe__json_err(p, "bad number");
  if (p->s[p->i] == '0') p->i++;
  else while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
  if (p->i < p->len && p->s[p->i] == '.') {
    p->i++;
    if (p->i >= p->len || p->s[p->i] < '0' || p->s[p->i] > '9') return tfe__json_err(p, "bad fraction");
    while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
  }
  if (p->i < p->len && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
    p->i++;
    if (p->i < p->len && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
    if (p->i >= p->len || p->s[p->i] < '0' || p->s[p->i] > '9') return tfe__json_err(p, "bad exponent");
    while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
  }
  char tmp[64];
  size_t n = p->i - b;
  if (n >= sizeof tmp) return tfe__json_err(p, "number too long");
  memcpy(tmp, p->s + b, n); tmp[n] = 0;
  *out = strtod(tmp, NULL);
  return TFE_OK;
}

TFE_INTERNAL tfe_status tfe__json_value(tfe__jp *p, int *id);
TFE_INTERNAL tfe_status tfe__json_container(tfe__jp *p, bool obj, int *id) {
  if (++p->depth > TFE_JSON_MAX_DEPTH) return tfe__json_err(p, "nesting too deep");
  int me = tfe__json_node(p, obj ? TFE_JSON_OBJECT : TFE_JSON_ARRAY);
  if (me < 0) return TFE_ERR_ALLOC;
  *id = me;
  p->i++;
  tfe__json_ws(p);
  char close = obj ? '}' : ']';
  if (p->i < p->len && p->s[p->i] == close) { p->i++; p->depth--; return TFE_OK; }
  int last = -1;
  for (;;) {
    size_t koff = 0, kn = 0;
    tfe__json_ws(p);
    if (obj) {
      if (p->i >= p->len || p->s[p->i] != '"') return tfe__json_err(p, "expected a member name");
      p->i++;
      TFE_TRY(tfe__json_string(p, &koff, &kn));
      tfe__json_ws(p);
      if (p->i >= p->len || p->s[p->i] != ':') return tfe__json_err(p, "expected ':'");
      p->i++;
    }
    int child;
    TFE_TRY(tfe__json_value(p, &child));
    tfe_json_node *nodes = p->j->nodes;
    if (obj) nodes[child].key = (const char *)(uintptr_t)(koff + 1); /* fixed up at the end */
    if (last < 0) nodes[me].first = child; else nodes[last].next = child;
    last = child;
    nodes[me].count++;
    tfe__json_ws(p);
    if (p->i < p->len && p->s[p->i] == ',') { p->i++; continue; }
    if (p->i < p->len && p->s[p->i] == close) { p->i++; p->depth--; return TFE_OK; }
    return tfe__json_err(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}
TFE_INTERNAL tfe_status tfe__json_value(tfe__jp *p, int *id) {
  tfe__json_ws(p);
  if (p->i >= p->len) return tfe__json_err(p, "unexpected end of input");
  char c = p->s[p->i];
  if (c == '{' || c == '[') return tfe__json_container(p, c == '{', id);
  if (c == '"') {
    int me = tfe__json_node(p, TFE_JSON_STRING);
    if (me < 0) return TFE_ERR_ALLOC;
    p->i++;
    size_t off, n;
    TFE_TRY(tfe__json_string(p, &off, &n));
    p->j->nodes[me].str = (const char *)(uintptr_t)(off + 1);
    p->j->nodes[me].len = n;
    *id = me;
    return TFE_OK;
  }
  static const struct { const char *w; tfe_json_type t; double v; } lits[] = {
      {"true", TFE_JSON_BOOL, 1}, {"false", TFE_JSON_BOOL, 0}, {"null", TFE_JSON_NULL, 0}};
  for (int k = 0; k < 3; k++) {
    size_t wl = strlen(lits[k].w);
    if (p->len - p->i >= wl && memcmp(p->s + p->i, lits[k].w, wl) == 0) {
      int me = tfe__json_node(p, lits[k].t);
      if (me < 0) return TFE_ERR_ALLOC;
      p->j->nodes[me].num = lits[k].v;
      p->i += wl;
      *id = me;
      return TFE_OK;
    }
  }
  double v = 0;
  TFE_TRY(tfe__json_number(p, &v));
  int me = tfe__json_node(p, TFE_JSON_NUMBER);
  if (me < 0) return TFE_ERR_ALLOC;
  p->j->nodes[me].num = v;
  *id = me;
  return TFE_OK;
}
TFE_API tfe_status tfe_json_parse(const char *text, size_t len, tfe_json *out) {
  TFE_CHECK_NULL(out);
  memset(out, 0, sizeof *out);
  if (!text && len) return TFE_FAIL(TFE_ERR_NULL, "argument 'text' is NULL");
  out->strs = (char *)tfe__alloc(len + 1); /* unescaped strings never exceed the text */
  if (!out->strs) return TFE_ERR_ALLOC;
  tfe__jp p = {text, len, 0, out, 0};
  int root;
  tfe_status st = tfe__json_value(&p, &root);
  if (st == TFE_OK) {
    tfe__json_ws(&p);
    if (p.i != len) st = tfe__json_err(&p, "trailing characters after the value");
  }
  if (st != TFE_OK) { tfe_json_free(out); return st; }
  for (int k = 0; k < out->n; k++) { /* offsets (+1) -> pointers, now that strs is final */
    tfe_json_node *nd = &out->nodes[k];
    if (nd->key) nd->key = out->strs + ((uintptr_t)nd->key - 1);
    if (nd->type == TFE_JSON_STRING) nd->str = out->strs + ((uintptr_t)nd->str - 1);
  }
  return TFE_OK;
}
TFE_API int tfe_json_get(const tfe_json *j, int obj, const char *key) {
  if (!j || obj < 0 || obj >= j->n || j->nodes[obj].type != TFE_JSON_OBJECT) return -1;
  for (int c = j->nodes[obj].first; c >= 0; c = j->nodes[c].next)
    if (strcmp(j->nodes[c].key, key) == 0) return c;
  return -1;
}
TFE_API int tfe_json_at(const tfe_json *j, int arr, int i) {
  if (!j || arr < 0 || arr >= j->n || j->nodes[arr].type != TFE_JSON_ARRAY || i < 0) return -1;
  int c = j->nodes[arr].first;
  while (c >= 0 && i-- > 0) c = j->nodes[c].next;
  return c;
}
#endif
