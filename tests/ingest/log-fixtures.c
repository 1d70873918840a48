/* log-fixtures.c — generated training logs shaped like real ones (see log-fixtures.h)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "log-fixtures.h"

#include <string.h>

#include <glib/gstdio.h>

const char *const dw_fixture_tags[DW_FIXTURE_N_TAGS]
  = { "actor/pg_loss", "rollout_corr/kl", "rollout_corr/rollout_is_mean", "response_length/mean" };

double
dw_fixture_value (guint tag, gint64 step, guint launch, double offset)
{
  /* many significant digits: a float32 or %.3f copy is visibly less precise */
  return offset + (double)tag * 0.1 + (double)step / 7.0 + (double)launch / 3.0 + 1e-3 / 3.0;
}

/* pprint of verl's resolved config (sorted keys, width 80), as the TaskRunner prints it. */
static void
append_config (GString *out, const char *prefix, const DwFixtureConsole *spec, GString *other)
{
  const char *thr = spec->rollout_is_threshold != NULL ? spec->rollout_is_threshold : "2.0";
  g_autofree char *lines = g_strdup_printf (
    "{'actor_rollout_ref': {'actor': {'clip_ratio': 0.2,\n"
    "                                 'ppo_mini_batch_size': 256,\n"
    "                                 'strategy': 'fsdp'},\n"
    "                       'model': {'path': '/data/models/Qwen2.5-0.5B-Instruct'},\n"
    "                       'rollout': {'calculate_log_probs': True,\n"
    "                                   'name': 'vllm',\n"
    "                                   'prompt': ('You are a helpful assistant. Think step by '\n"
    "                                              'step: {question}')}},\n"
    " 'algorithm': {'_target_': 'verl.trainer.config.AlgoConfig',\n"
    "               'adv_estimator': 'grpo',\n"
    "               'kl_ctrl': {'kl_coef': 0.001, 'type': 'fixed'},\n"
    "               'rollout_correction': {'bypass_mode': False,\n"
    "                                      'loss_type': 'ppo_clip',\n"
    "                                      'rollout_is': 'token',\n"
    "                                      'rollout_is_batch_normalize': False,\n"
    "                                      'rollout_is_threshold': %s,\n"
    "%s"
    "                                      'rollout_rs': %s,\n"
    "                                      'rollout_rs_threshold': %s}},\n"
    " 'trainer': {'experiment_name': '%s',\n"
    "             'logger': ['console', 'tensorboard'],\n"
    "             'n_gpus_per_node': 8,\n"
    "             'project_name': '%s',\n"
    "             'total_epochs': 15}}\n",
    thr,
    spec->g2_config
      ? "                                      'rollout_token_veto_threshold': 0.0001,\n"
      : "",
    spec->g2_config ? "'geometric'" : "'seq_mean_k3'", spec->g2_config ? "1.001" : "0.01",
    spec->experiment, spec->project);
  g_auto (GStrv) split = g_strsplit (lines, "\n", -1);

  for (guint i = 0; split[i] != NULL && split[i][0] != '\0'; i++)
    {
      g_string_append_printf (out, "%s%s\n", prefix, split[i]);
      /* another Ray worker's output lands between the config's lines */
      if (other != NULL && i % 5 == 2)
        g_string_append (out, other->str);
    }
}

GString *
dw_fixture_verl_console (const DwFixtureConsole *spec)
{
  GString *out = g_string_new (NULL);
  const char *tr = spec->ray ? "(TaskRunner pid=3165) " : "";
  g_autoptr (GString) other = g_string_new (NULL);
  guint k = 0;

  if (spec->ray)
    {
      g_string_append (out, "2026-06-02 10:11:12,345\tINFO worker.py:1841 -- Connected to Ray "
                            "cluster. View the dashboard at 127.0.0.1:8265\n");
      g_string_append (other, "\033[36m(WorkerDict pid=3301)\033[0m [rank0]: NCCL INFO "
                              "Channel 00/24 : 0 1 2 3 4 5 6 7\n");
    }
  if (spec->nul_in_head)
    g_string_append_len (out, "NCCL version 2.21.5+cuda12.4\0\n", 30);
  if (spec->version != NULL)
    g_string_append_printf (out, "%sverl==%s\n", tr, spec->version);
  if (spec->project != NULL)
    append_config (out, tr, spec, spec->ray ? other : NULL);
  /* engine start-up, sample echoes and validation output: the bulk of a real log's head */
  while (out->len < spec->preamble_bytes)
    {
      g_string_append_printf (out,
                              "%s[prompt] Natalia sold clips to %u of her friends in April, "
                              "and then she sold half as many clips in May. How many clips "
                              "did Natalia sell altogether in April and May? Let's think "
                              "step by step.\n",
                              tr, 48 + k);
      g_string_append_printf (out,
                              "%s[response] In April she sold %u; in May %u/2. step: add "
                              "them. #### %u\n",
                              tr, 48 + k, 48 + k, 72 + k);
      if (spec->ray && k % 7 == 0)
        g_string_append (out, other->str);
      k++;
    }
  for (gint64 step = spec->first_step; step <= spec->last_step; step++)
    {
      if (spec->tqdm)
        g_string_append_printf (out,
                                "%sTraining Progress:  %2d%%|\xe2\x96\x88\xe2\x96\x8b   | "
                                "%" G_GINT64_FORMAT "/435 [03:21<17:19,  2.86s/it]",
                                tr, (int)(step * 100 / 435), step);
      else
        g_string_append (out, tr);
      g_string_append_printf (out, "step:%" G_GINT64_FORMAT, step);
      for (guint t = 0; t < DW_FIXTURE_N_TAGS; t++)
        {
          double v = dw_fixture_value (t, step, spec->launch, spec->offset);
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          if (spec->legacy_3f)
            g_string_append_printf (out, " - %s:%.3f", dw_fixture_tags[t], v);
          else if (t % 2 == 1)
            g_string_append_printf (out, " - %s:np.float64(%s)", dw_fixture_tags[t],
                                    g_ascii_dtostr (buf, sizeof buf, v));
          else
            g_string_append_printf (out, " - %s:%s", dw_fixture_tags[t],
                                    g_ascii_dtostr (buf, sizeof buf, v));
        }
      g_string_append_c (out, '\n');
      if (spec->ray && step % 3 == 0)
        g_string_append (out, other->str);
    }
  if (spec->no_final_newline && out->len > 0 && out->str[out->len - 1] == '\n')
    g_string_truncate (out, out->len - 1);
  return out;
}

/* ---- TFRecord / Event writing ---------------------------------------------------------- */

static guint32
crc32c (const guint8 *p, gsize n)
{
  guint32 c = ~0u;
  while (n--)
    {
      c ^= *p++;
      for (int k = 0; k < 8; k++)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
  return ~c;
}

static guint32
masked (guint32 c)
{
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void
put_varint (GByteArray *b, guint64 v)
{
  while (v >= 0x80)
    {
      guint8 x = (guint8)(v | 0x80);
      g_byte_array_append (b, &x, 1);
      v >>= 7;
    }
  guint8 x = (guint8)v;
  g_byte_array_append (b, &x, 1);
}

static void
put_record (GByteArray *out, const GByteArray *data)
{
  guint64 len = data->len;
  guint32 c;

  g_byte_array_append (out, (const guint8 *)&len, 8);
  c = masked (crc32c ((const guint8 *)&len, 8));
  g_byte_array_append (out, (const guint8 *)&c, 4);
  g_byte_array_append (out, data->data, data->len);
  c = masked (crc32c (data->data, data->len));
  g_byte_array_append (out, (const guint8 *)&c, 4);
}

GByteArray *
dw_fixture_tfevents (gint64 first_step, gint64 last_step, guint launch, double offset, double wall0)
{
  GByteArray *out = g_byte_array_new ();
  g_autoptr (GByteArray) ev = g_byte_array_new ();
  const char *fv = "brain.Event:2";

  /* Event { wall_time = 1; file_version = 3 } */
  put_varint (ev, (1 << 3) | 1);
  g_byte_array_append (ev, (const guint8 *)&wall0, 8);
  put_varint (ev, (3 << 3) | 2);
  put_varint (ev, strlen (fv));
  g_byte_array_append (ev, (const guint8 *)fv, (guint)strlen (fv));
  put_record (out, ev);
  for (gint64 step = first_step; step <= last_step; step++)
    for (guint t = 0; t < DW_FIXTURE_N_TAGS; t++)
      {
        g_autoptr (GByteArray) val = g_byte_array_new ();
        g_autoptr (GByteArray) sum = g_byte_array_new ();
        double wall = wall0 + (double)(step - first_step) * 30.0;
        float v = (float)dw_fixture_value (t, step, launch, offset);

        /* Summary.Value { tag = 1; simple_value = 2 } */
        put_varint (val, (1 << 3) | 2);
        put_varint (val, strlen (dw_fixture_tags[t]));
        g_byte_array_append (val, (const guint8 *)dw_fixture_tags[t],
                             (guint)strlen (dw_fixture_tags[t]));
        put_varint (val, (2 << 3) | 5);
        g_byte_array_append (val, (const guint8 *)&v, 4);
        /* Summary { value = 1 } */
        put_varint (sum, (1 << 3) | 2);
        put_varint (sum, val->len);
        g_byte_array_append (sum, val->data, val->len);
        /* Event { wall_time = 1; step = 2; summary = 5 } */
        g_byte_array_set_size (ev, 0);
        put_varint (ev, (1 << 3) | 1);
        g_byte_array_append (ev, (const guint8 *)&wall, 8);
        put_varint (ev, (2 << 3) | 0);
        put_varint (ev, (guint64)step);
        put_varint (ev, (5 << 3) | 2);
        put_varint (ev, sum->len);
        g_byte_array_append (ev, sum->data, sum->len);
        put_record (out, ev);
      }
  return out;
}

void
dw_fixture_write (const char *path, const void *data, gssize len)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, data, len, NULL));
}
