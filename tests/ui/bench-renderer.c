/* bench-renderer.c — what a user on software rendering (llvmpipe under Xvfb: VNC, X forwarding,
 * no GPU) waits for: a Tune slider move until its redrawn frame is on screen, and the CPU the
 * idle Monitor page takes (as it comes up, and with the keyboard in the tag entry after typing a
 * filter, its text cursor blinking); with GTK's GL renderer
 * and with its cairo renderer (each in a process of its own: GTK picks the renderer once)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Fixture: the collapse demo run (200 steps, 200 stored batches) in a fresh store, shown in a
 * 1400 × 900 window as the application shows it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "dw-demo.h"
#include "dw-ingester.h"
#include "dw-tune-view.h"
#include "dw-ui-test-util.h"
#include "dw-window.h"

#define N_MOVES 12
/* CPU time of this process over this long (the machine may be shared: not wall time) */
#define IDLE_S 20

static double
cpu_seconds (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec
         + ru.ru_stime.tv_usec / 1e6;
}

typedef struct
{
  gboolean evaluated;
  gint64 painted; /* monotonic time of the first frame painted after the evaluation */
} Move;

static void
on_evaluated (DwTuneView *view, gboolean exact, Move *m)
{
  m->evaluated = TRUE;
}

static void
on_after_paint (GdkFrameClock *clock, Move *m)
{
  if (m->evaluated && m->painted == 0)
    m->painted = g_get_monotonic_time ();
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static gboolean
wait_ready (DwWindow *window, guint timeout_ms)
{
  gint64 until = g_get_monotonic_time () + (gint64)timeout_ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      g_main_context_iteration (NULL, FALSE);
      if (dw_window_is_ready (window))
        return TRUE;
      g_usleep (1000);
    }
  return FALSE;
}

/* The CPU this process takes over IDLE_S seconds of a blocking main loop (as the application's:
 * the benchmark itself never polls), in % of one core. */
static double
idle_cpu_percent (void)
{
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  double cpu0 = cpu_seconds (), t0 = g_get_monotonic_time () / 1e6;

  g_timeout_add_once (IDLE_S * 1000, (GSourceOnceFunc)g_main_loop_quit, loop);
  g_main_loop_run (loop);
  return 100 * (cpu_seconds () - cpu0) / (g_get_monotonic_time () / 1e6 - t0);
}

static int
run_child (const char *renderer)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("dw-bench-renderer-XXXXXX", NULL);
  g_autofree char *run = g_build_filename (dir, "demo-collapse", NULL);
  g_autofree char *db = g_build_filename (dir, "store.db", NULL);
  g_autoptr (DwStore) store = NULL;
  g_autoptr (DwIngester) ing = NULL;
  DwIngestReport report;
  DwWindow *window;
  GtkWidget *tune;
  GtkAdjustment *adj;
  GdkFrameClock *clock;
  double ms[N_MOVES], idle, idle_entry;
  GtkWidget *focus;
  const char *renderer_type;

  g_assert_true (dw_demo_write (run, DW_DEMO_COLLAPSE, 200, 1, &error));
  store = dw_store_open (db, &error);
  g_assert_no_error (error);
  ing = dw_ingester_new (store);
  dw_ingest_report_init (&report);
  g_assert_true (dw_ingester_ingest_path (ing, run, &report, &error));
  dw_ingest_report_clear (&report);

  window = dw_window_new (NULL, store, FALSE);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (wait_ready (window, 60000));
  dw_ui_test_iterate_ms (500);
  renderer_type = G_OBJECT_TYPE_NAME (gtk_native_get_renderer (GTK_NATIVE (window)));

  /* idle: the Monitor page as the window comes up (the keyboard where the window puts it) */
  dw_ui_test_iterate_ms (3000); /* the health rules and first draws are done */
  focus = gtk_root_get_focus (GTK_ROOT (window));
  idle = idle_cpu_percent ();
  /* idle with the keyboard in the tag entry, as after typing a filter (its cursor blinks) */
  gtk_widget_grab_focus (dw_ui_test_find_named (GTK_WIDGET (window), "tag-entry"));
  dw_ui_test_iterate_ms (3000);
  idle_entry = idle_cpu_percent ();

  /* the Tune page: IS threshold slider moves, each until its frame is painted */
  dw_window_set_view (window, "tune");
  g_assert_true (wait_ready (window, 120000));
  dw_ui_test_iterate_ms (500);
  tune = dw_ui_test_find_named (GTK_WIDGET (window), "scale-is-threshold");
  g_assert_nonnull (tune);
  adj = gtk_range_get_adjustment (GTK_RANGE (tune));
  tune = gtk_widget_get_ancestor (tune, DW_TYPE_TUNE_VIEW);
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  for (guint i = 0; i < N_MOVES; i++)
    {
      Move m = { 0 };
      gulong e = g_signal_connect (tune, "evaluated", G_CALLBACK (on_evaluated), &m);
      gulong p = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &m);
      gint64 start = g_get_monotonic_time ();

      gtk_adjustment_set_value (adj, i % 2 ? 0.30103 : 0.5);
      while (m.painted == 0 && g_get_monotonic_time () < start + 30 * G_USEC_PER_SEC)
        g_main_context_iteration (NULL, TRUE);
      ms[i] = (m.painted - start) / 1000.0;
      g_signal_handler_disconnect (tune, e);
      g_signal_handler_disconnect (clock, p);
      dw_ui_test_iterate_ms (200);
    }
  qsort (ms, N_MOVES, sizeof *ms, compare_double);
  printf ("renderer %s (%s): slider move to its painted frame: median %.0f ms, max %.0f ms "
          "(aim <= 100 ms)\n",
          renderer, renderer_type, ms[N_MOVES / 2], ms[N_MOVES - 1]);
  printf ("renderer %s (%s): idle Monitor page (focus on %s): %.2f %% of a core over %d s "
          "(aim <= 1 %%)\n",
          renderer, renderer_type, focus ? G_OBJECT_TYPE_NAME (focus) : "nothing", idle, IDLE_S);
  printf ("renderer %s (%s): idle Monitor page, keyboard in the tag entry: %.2f %% of a core "
          "over %d s\n",
          renderer, renderer_type, idle_entry, IDLE_S);
  gtk_window_destroy (GTK_WINDOW (window));
  dw_ui_test_iterate_ms (100);
  g_clear_object (&ing);
  g_clear_object (&store);
  g_unlink (db);
  return 0;
}

int
main (int argc, char **argv)
{
  static const char *const renderers[] = { "gl", "cairo" };

  if (g_getenv ("DW_BENCH_RENDERER_CHILD") != NULL)
    {
      gtk_init ();
      adw_init ();
      return run_child (g_getenv ("GSK_RENDERER"));
    }
  printf ("renderers on this display: %s (llvmpipe under Xvfb when no GPU)\n",
          g_getenv ("DISPLAY") ? g_getenv ("DISPLAY") : "?");
  for (guint i = 0; i < G_N_ELEMENTS (renderers); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *out = NULL;
      g_auto (GStrv) env = g_get_environ ();
      const char *const child_argv[] = { argv[0], NULL };
      int status;

      env = g_environ_setenv (env, "GSK_RENDERER", renderers[i], TRUE);
      env = g_environ_setenv (env, "DW_BENCH_RENDERER_CHILD", "1", TRUE);
      if (!g_spawn_sync (NULL, (char **)child_argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                         &status, &error)
          || !g_spawn_check_wait_status (status, &error))
        {
          printf ("renderer %s: failed: %s\n", renderers[i], error->message);
          return 1;
        }
      fputs (out, stdout);
      fflush (stdout);
    }
  return 0;
}
