/* dw-ingester.c — the ingester object and its entry points: a file, or a folder (see dw-ingester.h
 * for the rules); one file is recognised and read in dw-ingest-one.c
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

#include "dw-log-sniff.h"

#include "dw-ingester-private.h"

/* ------------------------------------------------------------------------------------------ */
/* Object                                                                                      */

G_DEFINE_FINAL_TYPE (DwIngester, dw_ingester, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_STORE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
dw_ingester_finalize (GObject *object)
{
  DwIngester *self = DW_INGESTER (object);

  g_clear_object (&self->store);
  g_free (self->store_path);
  g_clear_pointer (&self->sniffers, g_hash_table_unref);
  g_free (self->run_name);
  G_OBJECT_CLASS (dw_ingester_parent_class)->finalize (object);
}

static void
dw_ingester_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  DwIngester *self = DW_INGESTER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_ingester_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  DwIngester *self = DW_INGESTER (object);

  switch (prop_id)
    {
    case PROP_STORE:
      self->store = g_value_dup_object (value);
      if (self->store != NULL)
        self->store_path = g_canonicalize_filename (dw_store_get_path (self->store), NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
dw_ingester_class_init (DwIngesterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = dw_ingester_finalize;
  object_class->get_property = dw_ingester_get_property;
  object_class->set_property = dw_ingester_set_property;

  properties[PROP_STORE]
    = g_param_spec_object ("store", NULL, NULL, DW_TYPE_STORE,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
dw_ingester_init (DwIngester *self)
{
  self->chunk = DW_INGESTER_DEFAULT_CHUNK;
  self->sniffers
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)dw_sniffer_free);
  self->sniff_budget_us = DW_SNIFF_BUDGET_US;
}

DwIngester *
dw_ingester_new (DwStore *store)
{
  g_return_val_if_fail (DW_IS_STORE (store), NULL);
  return g_object_new (DW_TYPE_INGESTER, "store", store, NULL);
}

DwStore *
dw_ingester_get_store (DwIngester *self)
{
  g_return_val_if_fail (DW_IS_INGESTER (self), NULL);
  return self->store;
}

void
dw_ingester_set_run_name (DwIngester *self, const char *name)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  g_free (self->run_name);
  self->run_name = g_strdup (name);
}

void
dw_ingester_set_chunk_size (DwIngester *self, gsize bytes)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->chunk = MAX (bytes, 64);
}

void
dw_ingester_set_sniff_budget (DwIngester *self, gint64 budget_us)
{
  g_return_if_fail (DW_IS_INGESTER (self));
  self->sniff_budget_us = budget_us;
}

gboolean
dw_ingester_ingest_file (DwIngester *self, const char *path, const char *run_root,
                         DwIngestReport *report, GError **error)
{
  g_return_val_if_fail (DW_IS_INGESTER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  return dw_ingester_ingest_one (self, path, run_root, TRUE, report, error);
}

gboolean
dw_ingester_ingest_path (DwIngester *self, const char *path, DwIngestReport *report, GError **error)
{
  g_autofree char *abs = NULL;

  g_return_val_if_fail (DW_IS_INGESTER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  abs = g_canonicalize_filename (path, NULL);
  if (g_file_test (abs, G_FILE_TEST_IS_DIR))
    return dw_ingest_folder_read (self, abs, report, 0, error);
  if (!g_file_test (abs, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _ ("%s: no such file or folder"), path);
      return FALSE;
    }
  return dw_ingester_ingest_one (self, abs, NULL, TRUE, report, error);
}
