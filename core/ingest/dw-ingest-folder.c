/* dw-ingest-folder.c — folders: which files form one run, which sub-folders are runs of their own
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <inttypes.h>

#include "dw-reader-loggers.h"

#include "dw-ingester-private.h"

/* ------------------------------------------------------------------------------------------ */
/* Folders                                                                                     */

typedef struct
{
  GPtrArray *files; /* char* */
  GPtrArray *dirs;  /* char* */
} Listing;

static void
list_dir (const char *dir, Listing *l)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  l->files = g_ptr_array_new_with_free_func (g_free);
  l->dirs = g_ptr_array_new_with_free_func (g_free);
  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = NULL;
      if (name[0] == '.')
        continue;
      p = g_build_filename (dir, name, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_SYMLINK) && g_file_test (p, G_FILE_TEST_IS_DIR))
        continue; /* no loops */
      if (g_file_test (p, G_FILE_TEST_IS_DIR))
        g_ptr_array_add (l->dirs, g_steal_pointer (&p));
      else if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (l->files, g_steal_pointer (&p));
    }
  g_ptr_array_sort (l->files, (GCompareFunc)g_strcmp0);
  g_ptr_array_sort (l->dirs, (GCompareFunc)g_strcmp0);
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static void
listing_clear (Listing *l)
{
  g_clear_pointer (&l->files, g_ptr_array_unref);
  g_clear_pointer (&l->dirs, g_ptr_array_unref);
}

/* Is @path a file the ingester reads (stored already, or recognised by content)? */
static gboolean
is_data_file (DwIngester *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autoptr (DwFileRecord) rec = NULL;
  DwFormat f;
  int fd;

  if (dw_ingester_is_store_file (self, abs))
    return FALSE;
  rec = dw_store_get_file (self->store, abs, NULL);
  if (rec != NULL)
    return TRUE;
  fd = g_open (abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0)
    return FALSE;
  f = dw_ingester_recognise_fd (self, fd, abs, NULL);
  close (fd);
  return f != DW_FORMAT_UNKNOWN;
}

static gboolean
has_data (DwIngester *self, const char *dir, int depth)
{
  Listing l;
  gboolean found = FALSE;

  if (depth > DW_INGESTER_MAX_DEPTH)
    return FALSE;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len && !found; i++)
    found = is_data_file (self, l.files->pdata[i]);
  for (guint i = 0; i < l.dirs->len && !found; i++)
    found = has_data (self, l.dirs->pdata[i], depth + 1);
  listing_clear (&l);
  return found;
}

/* Every regular file under @dir, sorted (paths order = ingest order: tfevents names carry the
 * creation time, so a restart's newer file comes later). */
static void
collect_files (const char *dir, GPtrArray *out, int depth)
{
  Listing l;

  if (depth > DW_INGESTER_MAX_DEPTH)
    return;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len; i++)
    g_ptr_array_add (out, g_strdup (l.files->pdata[i]));
  for (guint i = 0; i < l.dirs->len; i++)
    collect_files (l.dirs->pdata[i], out, depth + 1);
  listing_clear (&l);
}

/* The project of @dir/tensorboard_log when it holds exactly one <project>/<experiment> with
 * data, else NULL. */
static char *
single_tb_project (DwIngester *self, const char *dir, int depth)
{
  g_autofree char *tb = g_build_filename (dir, "tensorboard_log", NULL);
  Listing projects;
  char *project = NULL;
  guint n = 0;

  if (!g_file_test (tb, G_FILE_TEST_IS_DIR))
    return NULL;
  list_dir (tb, &projects);
  for (guint i = 0; i < projects.dirs->len; i++)
    {
      Listing exps;
      list_dir (projects.dirs->pdata[i], &exps);
      for (guint k = 0; k < exps.dirs->len; k++)
        if (has_data (self, exps.dirs->pdata[k], depth + 3))
          {
            n++;
            g_free (project);
            project = g_path_get_basename (projects.dirs->pdata[i]);
          }
      listing_clear (&exps);
    }
  listing_clear (&projects);
  if (n != 1)
    g_clear_pointer (&project, g_free);
  return project;
}

static gboolean
is_console_format (DwFormat f)
{
  return f == DW_FORMAT_VERL_CONSOLE || f == DW_FORMAT_SLIME_CONSOLE;
}

/* A folder: its own data files and part folders (tensorboard/, batches/, …) are one run named
 * after it, except the console logs of a folder named "logs" (one run per log, unless a log's
 * printed config names an experiment that is already a run); every other folder holding data is
 * resolved the same way, on its own (tensorboard_log/<project>/<experiment>/: one run per
 * experiment). So a folder of runs gives the same runs as each sub-folder. */
gboolean
dw_ingest_folder_read (DwIngester *self, const char *dir, DwIngestReport *report, int depth,
                       GError **error)
{
  Listing l;
  gboolean ok = TRUE;
  g_autoptr (GPtrArray) run_files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) own = g_ptr_array_new ();
  g_autoptr (GPtrArray) sub_runs = g_ptr_array_new ();
  g_autofree char *dbase = g_path_get_basename (dir);
  guint n_console = 0;
  /* an MLflow file-store run folder: its metrics/ (params/, tags/) folders are part of it */
  gboolean mlflow_run = dw_mlflow_file_is_run_dir (dir);

  if (depth > DW_INGESTER_MAX_DEPTH)
    return TRUE;
  list_dir (dir, &l);
  for (guint i = 0; i < l.files->len; i++)
    {
      const char *f = l.files->pdata[i];
      DwFormat fmt;

      if (!is_data_file (self, f))
        {
          g_ptr_array_add (run_files,
                           g_strdup (f)); /* skipped with its reason by dw_ingester_ingest_one */
          continue;
        }
      fmt = dw_ingester_recognise (self, f, NULL);
      if (is_console_format (fmt))
        {
          n_console++;
          g_ptr_array_add (own, (gpointer)f);
        }
      else
        g_ptr_array_add (run_files, g_strdup (f));
    }
  if (n_console > 0 && g_ascii_strcasecmp (dbase, "logs") != 0)
    {
      /* console logs beside other files of a run folder: part of the folder's run */
      for (guint i = 0; i < own->len; i++)
        g_ptr_array_add (run_files, g_strdup (own->pdata[i]));
      g_ptr_array_set_size (own, 0);
    }
  /* A run folder (it holds logs itself) whose tensorboard_log/ holds ONE experiment: that is
   * the folder's own run (verl's working directory: stdout, tensorboard_log/<project>/<exp>/,
   * <project>/<exp>.jsonl). With several experiments each is a run of its own. */
  g_autofree char *single_project = NULL;
  if (run_files->len > 0)
    single_project = single_tb_project (self, dir, depth);
  for (guint i = 0; i < l.dirs->len; i++)
    {
      const char *sub = l.dirs->pdata[i];
      g_autofree char *base = g_path_get_basename (sub);

      if (!has_data (self, sub, depth + 1))
        continue;
      if (dw_ingest_runs_is_part_dir (base) || mlflow_run
          || (single_project != NULL
              && (g_str_equal (base, "tensorboard_log") || g_str_equal (base, single_project))))
        collect_files (sub, run_files, depth + 1);
      else
        g_ptr_array_add (sub_runs, (gpointer)sub);
    }
  g_ptr_array_sort (run_files, cmp_str);
  {
    gboolean any_data = own->len > 0 || sub_runs->len > 0;
    for (guint i = 0; i < run_files->len && !any_data; i++)
      any_data = is_data_file (self, run_files->pdata[i]);
    if (!any_data)
      {
        /* nothing recognised: each file still says why it was skipped */
        for (guint i = 0; i < run_files->len && ok; i++)
          ok = dw_ingester_ingest_one (self, run_files->pdata[i], dir, FALSE, report, error);
        if (run_files->len == 0)
          dw_ingester_report_note (report, _ ("%s: no log or batch file found"), dir);
        listing_clear (&l);
        return ok;
      }
  }
  for (guint i = 0; i < run_files->len && ok; i++)
    ok = dw_ingester_ingest_one (self, run_files->pdata[i], dir, FALSE, report, error);
  for (guint i = 0; i < own->len && ok; i++)
    ok = dw_ingester_ingest_one (self, own->pdata[i], own->pdata[i], FALSE, report, error);
  for (guint i = 0; i < sub_runs->len && ok; i++)
    ok = dw_ingest_folder_read (self, sub_runs->pdata[i], report, depth + 1, error);
  listing_clear (&l);
  return ok;
}
