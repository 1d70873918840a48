/* dw-logger-run-name.c — run names written by the experiment trackers themselves
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An MLflow file-store run folder is named by its run id and a SwanLab run folder
 * swanlog/run-<time>-<id>/ by a time stamp; the name the user gave (verl's experiment_name) is
 * in the run's meta.yaml and in the .swanlab file's start record.
 */
#include "dw-reader-loggers.h"

/* swanlog/run-<time>-<id>/ holds run-<id>.swanlab */
static char *
swanlab_dir_run_name (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "run-") && g_str_has_suffix (name, ".swanlab"))
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        return dw_swanlab_run_name (path);
      }
  return NULL;
}

char *
dw_logger_run_name (const char *run_root)
{
  if (!g_file_test (run_root, G_FILE_TEST_IS_DIR))
    return dw_swanlab_run_name (run_root);
  if (dw_mlflow_file_is_run_dir (run_root))
    return dw_mlflow_file_run_name (run_root);
  return swanlab_dir_run_name (run_root);
}
