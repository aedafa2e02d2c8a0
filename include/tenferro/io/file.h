/* tenferro/io/file.h — io room: files written whole or not at all.
 *
 * A writer opens a temporary file next to the target (same folder, so the rename stays on one
 * file system), writes, and commits: on success the temporary file is renamed over the target
 * (an atomic replace on POSIX systems), on any failure it is removed. A failed write thus
 * leaves no truncated file and no temporary behind, and an existing target is kept as it was.
 *
 *   tfe__afile af;
 *   TFE_TRY(tfe__afile_open(&af, path, where));
 *   bool ok = fwrite(..., af.f) == n;
 *   return tfe__afile_commit(&af, ok, where);   // closes; renames or removes
 */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_IO_FILE_H
#define TENFERRO_IO_FILE_H
#include <tenferro/core/core.h>
#include <stdio.h>

typedef struct tfe__afile {
  FILE *f;
  char *tmp;        /* the temporary file's name (allocated) */
  const char *path; /* the target */
} tfe__afile;

#endif
#elif !defined(TENFERRO_IO_FILE_BODY) /* bodies */
#define TENFERRO_IO_FILE_BODY
#include <stdatomic.h>
#include <errno.h>

/* Opens "<path>.tfe-tmp-<k>" for writing, created exclusively (C11 "x": never an existing
 * file); k counts up past names another writer holds. */
TFE_INTERNAL tfe_status tfe__afile_open(tfe__afile *a, const char *path, const char *where) {
  static atomic_uint counter;
  size_t n = strlen(path) + 32;
  a->f = NULL; a->path = path;
  a->tmp = (char *)tfe__alloc(n);
  if (!a->tmp) return TFE_ERR_ALLOC;
  for (int tries = 0; tries < 64 && !a->f; tries++) {
    snprintf(a->tmp, n, "%s.tfe-tmp-%u", path, atomic_fetch_add(&counter, 1u) + (unsigned)tries * 7919u);
    errno = 0;
    a->f = fopen(a->tmp, "wbx");
    if (!a->f && errno != EEXIST) break;
  }
  if (a->f) return TFE_OK;
  int e = errno;
  tfe__free(a->tmp); a->tmp = NULL;
  return tfe__fail(TFE_ERR_IO, where, "cannot write '%s': creating a temporary file next to it failed (%s)", path,
                   e ? strerror(e) : "name taken");
}
/* Closes the file; renames it over the target when ok and the close succeeded, else removes it. */
TFE_INTERNAL tfe_status tfe__afile_commit(tfe__afile *a, bool ok, const char *where) {
  int e = ok ? 0 : errno;
  if (fflush(a->f) != 0 && ok) { ok = false; e = errno; }
  if (fclose(a->f) != 0 && ok) { ok = false; e = errno; }
  if (ok && rename(a->tmp, a->path) != 0) { ok = false; e = errno; }
  if (!ok) remove(a->tmp);
  tfe__free(a->tmp);
  a->f = NULL; a->tmp = NULL;
  if (ok) return TFE_OK;
  return tfe__fail(TFE_ERR_IO, where, "write to '%s' failed (%s); the file was left as it was", a->path,
                   e ? strerror(e) : "short write");
}
#endif
