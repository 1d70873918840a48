/* dw-demo.c — a realistic demo run folder; see dw-demo.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "dw-batch-reader.h"
#include "dw-correction.h"
#include "dw-demo.h"
#include "dw-log-reader-private.h"

#define DEMO_START_TIME 1795353214.0
#define DEMO_GROUP      8 /* GRPO n: rows per prompt */
/* The Ray prefix of what verl's TaskRunner prints (v0.9.0 runs TaskRunnerV1 by default). */
#define DEMO_TASK_RUNNER "(TaskRunnerV1 pid=2817) "

struct _DwDemo
{
  char *outdir;
  char *jsonl_path;
  char *events_path;
  char *console_path;
  char *batch_dir;
  DwDemoScenario scenario;
  guint steps;
  guint step; /* last step written */
  guint64 seed;
  GRand *rand;
  DwConfig config;
  double wall_time;
};

typedef struct
{
  GString *json;    /* the JSONL line being built */
  GString *events;  /* tfevents records of the step */
  GString *console; /* the console backend's line of the step */
  gint64 step;
  double wall_time;
} StepOut;

gboolean
dw_demo_scenario_from_name (const char *name, DwDemoScenario *out)
{
  if (g_strcmp0 (name, "healthy") == 0)
    *out = DW_DEMO_HEALTHY;
  else if (g_strcmp0 (name, "collapse") == 0)
    *out = DW_DEMO_COLLAPSE;
  else
    return FALSE;
  return TRUE;
}

const char *
dw_demo_scenario_name (DwDemoScenario scenario)
{
  return scenario == DW_DEMO_COLLAPSE ? "collapse" : "healthy";
}

gint64
dw_demo_collapse_step (guint steps)
{
  return MAX (1, (gint64)steps * 7 / 10);
}

/* ------------------------------------------------------------------------------------------ */
/* Output encodings                                                                            */

static guint32
masked_crc (const guint8 *data, gsize len)
{
  guint32 c = dw_crc32c (0, data, len);

  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void
put_varint (GString *s, guint64 v)
{
  while (v >= 0x80)
    {
      g_string_append_c (s, (char)(v | 0x80));
      v >>= 7;
    }
  g_string_append_c (s, (char)v);
}

static void
put_le (GString *s, guint64 v, int n)
{
  for (int i = 0; i < n; i++)
    g_string_append_c (s, (char)((v >> (8 * i)) & 0xff));
}

/* One TFRecord holding @event. */
static void
put_record (GString *out, const GString *event)
{
  guint8 len[8];

  for (int i = 0; i < 8; i++)
    len[i] = (guint8)(((guint64)event->len >> (8 * i)) & 0xff);
  g_string_append_len (out, (const char *)len, 8);
  put_le (out, masked_crc (len, 8), 4);
  g_string_append_len (out, event->str, event->len);
  put_le (out, masked_crc ((const guint8 *)event->str, event->len), 4);
}

static void
put_double_field (GString *s, guint32 field, double v)
{
  guint64 bits;

  memcpy (&bits, &v, 8);
  put_varint (s, (guint64)field << 3 | 1);
  put_le (s, bits, 8);
}

/* Event{wall_time, step, summary{value{tag, simple_value}}}, as torch's add_scalar writes it. */
static void
put_scalar_event (GString *out, double wall_time, gint64 step, const char *tag, double value)
{
  g_autoptr (GString) event = g_string_new (NULL);
  g_autoptr (GString) val = g_string_new (NULL);
  g_autoptr (GString) summary = g_string_new (NULL);
  float f = (float)value;
  guint32 bits;

  memcpy (&bits, &f, 4);
  put_varint (val, 1 << 3 | 2);
  put_varint (val, strlen (tag));
  g_string_append (val, tag);
  put_varint (val, 2 << 3 | 5);
  put_le (val, bits, 4);
  put_varint (summary, 1 << 3 | 2);
  put_varint (summary, val->len);
  g_string_append_len (summary, val->str, val->len);

  put_double_field (event, 1, wall_time);
  put_varint (event, 2 << 3 | 0);
  put_varint (event, (guint64)step);
  put_varint (event, 5 << 3 | 2);
  put_varint (event, summary->len);
  g_string_append_len (event, summary->str, summary->len);
  put_record (out, event);
}

static void
put_file_version (GString *out, double wall_time)
{
  g_autoptr (GString) event = g_string_new (NULL);
  const char *version = "brain.Event:2";

  put_double_field (event, 1, wall_time);
  put_varint (event, 3 << 3 | 2);
  put_varint (event, strlen (version));
  g_string_append (event, version);
  put_record (out, event);
}

/* orjson's float rendering: shortest round-trip, exponent without '+' or leading zeros. */
static void
append_json_number (GString *s, double v)
{
  char buf[64];
  char *e;

  if (!isfinite (v))
    {
      g_string_append (s, "null");
      return;
    }
  dw_python_float_repr (v, buf, sizeof buf);
  e = strchr (buf, 'e');
  if (e != NULL)
    {
      char *p = e + 1, *q;
      gboolean neg = *p == '-';

      if (*p == '+' || *p == '-')
        p++;
      q = p;
      while (*q == '0' && q[1] != '\0')
        q++;
      g_string_append_len (s, buf, e - buf + 1);
      if (neg)
        g_string_append_c (s, '-');
      g_string_append (s, q);
      return;
    }
  g_string_append (s, buf);
}

/* Python's repr of a float (nan, inf, -inf for the others). */
static void
append_python_float (GString *s, double v)
{
  char buf[64];

  if (isnan (v))
    g_string_append (s, "nan");
  else if (isinf (v))
    g_string_append (s, v > 0 ? "inf" : "-inf");
  else
    g_string_append (s, dw_python_float_repr (v, buf, sizeof buf));
}

static void
emit (StepOut *o, const char *key, double value)
{
  if (o->json->len > 0 && o->json->str[o->json->len - 1] != '{')
    g_string_append_c (o->json, ',');
  g_string_append_printf (o->json, "\"%s\":", key);
  append_json_number (o->json, value);
  put_scalar_event (o->events, o->wall_time, o->step, key, value);
  /* verl's concat_dict_to_str: " - key:pformat(v)"; what reduce_metrics averaged is a numpy
   * scalar (numpy ≥ 2 prints np.float64(…)), the rest Python floats (docs/FORMATS.md §7) */
  g_string_append_printf (o->console, " - %s:", key);
  if (g_str_has_prefix (key, "actor/") && strcmp (key, "actor/entropy") != 0)
    {
      g_string_append (o->console, "np.float64(");
      append_python_float (o->console, value);
      g_string_append_c (o->console, ')');
    }
  else
    append_python_float (o->console, value);
}

static void
emit_int (StepOut *o, const char *key, gint64 value)
{
  if (o->json->len > 0 && o->json->str[o->json->len - 1] != '{')
    g_string_append_c (o->json, ',');
  g_string_append_printf (o->json, "\"%s\":%" G_GINT64_FORMAT, key, value);
  put_scalar_event (o->events, o->wall_time, o->step, key, (double)value);
  g_string_append_printf (o->console, " - %s:%" G_GINT64_FORMAT, key, value);
}

/* ------------------------------------------------------------------------------------------ */
/* The simulated run                                                                           */

static double
gauss (GRand *rand)
{
  double u1 = g_rand_double_range (rand, 1e-300, 1.0), u2 = g_rand_double (rand);

  return sqrt (-2.0 * log (u1)) * cos (2.0 * G_PI * u2);
}

/* Standard deviation of the per-token log-ratio at @step. */
static double
demo_sigma (const DwDemo *d, gint64 step)
{
  double base = 0.008;
  double t = (double)step / MAX (d->steps, 1);

  if (d->scenario == DW_DEMO_HEALTHY)
    return base * (1.0 + 0.15 * sin (t * 9.0));
  {
    gint64 c = dw_demo_collapse_step (d->steps);
    double onset = 0.35 * (double)c;

    if (step >= c)
      return 0.9;
    if (step < onset)
      return base;
    return base * pow (0.5 / base, ((double)step - onset) / ((double)c - onset));
  }
}

/* Probability that a response is correct. */
static double
demo_accuracy (const DwDemo *d, gint64 step)
{
  double t = (double)step / MAX (d->steps, 1);
  double p = 0.25 + 0.5 * (1.0 - exp (-3.0 * t));

  if (d->scenario == DW_DEMO_COLLAPSE)
    {
      gint64 c = dw_demo_collapse_step (d->steps);
      if (step >= c)
        p = 0.04;
      else if (step > c - 15)
        p *= 1.0 - 0.6 * (double)(step - (c - 15)) / 15.0;
    }
  return p;
}

typedef struct
{
  double score_mean, score_max, score_min;
  double adv_mean, adv_max, adv_min;
  double len_mean, len_max, len_min, clip_ratio;
  double entropy;
  double pdiff_mean, pdiff_max, pdiff_std;
  gint64 n_tokens;
} BatchFacts;

/* Token ids without touching the demo's random stream (its numbers stay as they were): a hash of
 * the place in a Qwen-sized vocabulary; the catastrophic tokens come from a handful of ids
 * (end-of-text, newline, '.', ',', a digit), as real mismatches cluster on a few tokens. */
static gint64
demo_token_id (gint64 step, guint row, guint col, gboolean catastrophic)
{
  static const gint64 troublesome[] = { 151643, 198, 13, 11, 15 };
  guint64 h = (guint64)step * 0x9E3779B97F4A7C15u ^ ((guint64)row << 32 | col);

  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9u;
  h ^= h >> 29;
  if (catastrophic)
    return troublesome[h % 7 % G_N_ELEMENTS (troublesome)];
  return (gint64)(h % 151000u);
}

static DwBatch *
make_batch (DwDemo *d, gint64 step, BatchFacts *facts)
{
  DwBatch *b = dw_batch_new (DW_DEMO_ROWS, DW_DEMO_COLS, DW_DTYPE_F32, DW_DTYPE_U8);
  float *old = b->old_log_prob, *roll = b->rollout_log_prob, *adv;
  guint8 *mask = b->response_mask;
  double sigma = demo_sigma (d, step), p = demo_accuracy (d, step);
  gboolean collapsed = d->scenario == DW_DEMO_COLLAPSE && step >= dw_demo_collapse_step (d->steps);
  double scores[DW_DEMO_ROWS];
  double ent_sum = 0, pd_sum = 0, pd_sq = 0, pd_max = 0;
  gint64 n_valid = 0, n_clipped = 0;
  double len_sum = 0, len_max = 0, len_min = G_MAXDOUBLE;

  b->step = step;
  b->token_ids = g_new0 (gint64, DW_DEMO_ROWS * DW_DEMO_COLS);
  b->rewards = g_new0 (double, DW_DEMO_ROWS);
  b->advantages = g_new0 (float, DW_DEMO_ROWS *DW_DEMO_COLS);
  adv = b->advantages;
  for (guint r = 0; r < DW_DEMO_ROWS; r++)
    {
      double mean_len = collapsed ? 250.0 : 140.0 + 40.0 * (double)step / MAX (d->steps, 1);
      gint64 len = (gint64)llround (mean_len + gauss (d->rand) * 45.0);

      len = CLAMP (len, 12, DW_DEMO_COLS);
      scores[r] = g_rand_double (d->rand) < p ? 1.0 : 0.0;
      for (guint t = 0; t < DW_DEMO_COLS; t++)
        {
          gsize i = (gsize)r * DW_DEMO_COLS + t;

          if ((gint64)t >= len)
            {
              /* padding: verl pads rollout log-probs with 0; keep some garbage in old */
              old[i] = (float)-g_rand_double_range (d->rand, 0.0, 30.0);
              roll[i] = 0.0f;
              continue;
            }
          {
            /* sampled-token log-prob: mostly confident, a heavy tail of unsure tokens */
            double lp = -fabs (gauss (d->rand)) * (collapsed ? 1.6 : 0.45);
            double l = gauss (d->rand) * sigma - sigma * sigma / 2.0; /* old − rollout */

            b->token_ids[i] = demo_token_id (step, r, t, FALSE);
            if (collapsed && g_rand_double (d->rand) < 0.004)
              {
                l = -7.0; /* catastrophic token: the rollout engine was sure, training is not */
                b->token_ids[i] = demo_token_id (step, r, t, TRUE);
              }
            lp = MAX (lp, -18.0);
            /* both engines' log-probs stay ≤ 0 (probabilities ≤ 1) whatever the sign of their
             * difference l: the smaller one sits |l| below lp, the other at lp */
            old[i] = (float)(lp + MIN (0.0, l));
            roll[i] = (float)(lp - MAX (0.0, l));
            mask[i] = 1;
            ent_sum += -lp;
            {
              double pd = fabs (exp ((double)roll[i]) - exp ((double)old[i]));
              pd_sum += pd;
              pd_sq += pd * pd;
              pd_max = MAX (pd_max, pd);
            }
            n_valid++;
          }
        }
      len_sum += (double)len;
      len_max = MAX (len_max, (double)len);
      len_min = MIN (len_min, (double)len);
      if (len == DW_DEMO_COLS)
        n_clipped++;
    }

  for (guint r = 0; r < DW_DEMO_ROWS; r++)
    b->rewards[r] = scores[r];

  /* GRPO advantages: score normalised within each group of DEMO_GROUP responses */
  facts->adv_mean = 0;
  facts->adv_max = -G_MAXDOUBLE;
  facts->adv_min = G_MAXDOUBLE;
  {
    double adv_sum = 0;
    gint64 adv_n = 0;

    for (guint g = 0; g < DW_DEMO_ROWS / DEMO_GROUP; g++)
      {
        double mean = 0, var = 0;

        for (guint k = 0; k < DEMO_GROUP; k++)
          mean += scores[g * DEMO_GROUP + k];
        mean /= DEMO_GROUP;
        for (guint k = 0; k < DEMO_GROUP; k++)
          var += (scores[g * DEMO_GROUP + k] - mean) * (scores[g * DEMO_GROUP + k] - mean);
        var /= DEMO_GROUP - 1;
        for (guint k = 0; k < DEMO_GROUP; k++)
          {
            guint r = g * DEMO_GROUP + k;
            float a = (float)((scores[r] - mean) / (sqrt (var) + 1e-6));

            for (guint t = 0; t < DW_DEMO_COLS; t++)
              if (mask[(gsize)r * DW_DEMO_COLS + t])
                {
                  adv[(gsize)r * DW_DEMO_COLS + t] = a;
                  adv_sum += a;
                  adv_n++;
                  facts->adv_max = MAX (facts->adv_max, a);
                  facts->adv_min = MIN (facts->adv_min, a);
                }
          }
      }
    facts->adv_mean = adv_n > 0 ? adv_sum / (double)adv_n : 0.0;
  }

  facts->score_mean = 0;
  facts->score_max = 0;
  facts->score_min = 1;
  for (guint r = 0; r < DW_DEMO_ROWS; r++)
    {
      facts->score_mean += scores[r] / DW_DEMO_ROWS;
      facts->score_max = MAX (facts->score_max, scores[r]);
      facts->score_min = MIN (facts->score_min, scores[r]);
    }
  facts->len_mean = len_sum / DW_DEMO_ROWS;
  facts->len_max = len_max;
  facts->len_min = len_min;
  facts->clip_ratio = (double)n_clipped / DW_DEMO_ROWS;
  facts->entropy = n_valid > 0 ? ent_sum / (double)n_valid : 0.0;
  facts->pdiff_mean = n_valid > 0 ? pd_sum / (double)n_valid : 0.0;
  facts->pdiff_max = pd_max;
  facts->pdiff_std
    = n_valid > 1
        ? sqrt (MAX (0.0, (pd_sq - pd_sum * pd_sum / (double)n_valid) / (double)(n_valid - 1)))
        : 0.0;
  facts->n_tokens = n_valid;
  return b;
}

/* ------------------------------------------------------------------------------------------ */
/* The console log's start                                                                     */

/* A config value as Python's repr prints it inside pprint's dict. */
static void
append_python_value (GString *s, const DwValue *v)
{
  switch (v->kind)
    {
    case DW_VALUE_NONE:
      g_string_append (s, "None");
      break;
    case DW_VALUE_BOOL:
      g_string_append (s, v->b ? "True" : "False");
      break;
    case DW_VALUE_INT:
      g_string_append_printf (s, "%" G_GINT64_FORMAT, (gint64)v->i);
      break;
    case DW_VALUE_FLOAT:
      append_python_float (s, v->f);
      break;
    default:
      g_string_append_printf (s, "'%s'", v->s);
      break;
    }
}

static int
demo_cmp_key (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* verl's algorithm.rollout_correction block as pprint lays it out (keys sorted, one a line,
 * aligned after the brace at @indent), from the config the demo trains with: every key the
 * config holds (the preset expanded), nothing hard-coded. */
static void
append_rollout_correction (GString *s, const DwConfig *config, guint indent)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();

  for (size_t i = 0; i < config->n_keys; i++)
    if (strcmp (config->keys[i], "preset") != 0)
      g_ptr_array_add (keys, (gpointer)config->keys[i]);
  g_ptr_array_sort (keys, demo_cmp_key);
  g_string_append (s, "'rollout_correction': {");
  for (guint k = 0; k < keys->len; k++)
    {
      if (k > 0)
        g_string_append_printf (s, ",\n%*s", indent, "");
      g_string_append_printf (s, "'%s': ", (const char *)keys->pdata[k]);
      append_python_value (s, dw_config_get (config, keys->pdata[k]));
    }
  g_string_append (s, "}");
}

/* What the driver's stdout (`python3 -m verl.trainer.main_ppo … 2>&1 | tee train.log`) holds
 * before the first step of a verl v0.9.0 run: the job script's `pip freeze` of the stack (verl
 * itself prints no version), Ray's start-up, `ray init kwargs` (main_ppo.run_ppo), the resolved
 * config pprint-ed by the TaskRunner with the lines other Ray processes print in between, and
 * the engines starting (FSDP workers, vLLM servers, the loggers). */
static GString *
demo_console_preamble (const DwDemo *d)
{
  GString *s = g_string_new (NULL);
  g_autoptr (GString) config = g_string_new (NULL);
  /* a user names each experiment: the run folder's name, so two demo folders of the same
   * scenario and seed stay two runs (ingest joins a console log to the run of its experiment) */
  g_autofree char *folder = g_path_get_basename (d->outdir);
  g_autofree char *experiment
    = g_strdup_printf ("%s_qwen2_5_0_5b_grpo_%s_seed%" G_GUINT64_FORMAT, folder,
                       dw_demo_scenario_name (d->scenario), d->seed);
  const char *raylet = "(raylet) WARNING: 8 PYTHON worker processes have been started on node: "
                       "3f9c0d1e2a with address: 10.0.0.12. This could be a result of using a "
                       "large number of actors, or due to tasks blocked in ray.get() calls (see "
                       "https://github.com/ray-project/ray/issues/3644 for some discussion of "
                       "workarounds).\n";
  static const char *const engines[] = {
    "(WorkerDict pid=3301) [rank0]: Model config after override: Qwen2Config {...}",
    "(WorkerDict pid=3301) Qwen2ForCausalLM contains 494.03M parameters",
    "(WorkerDict pid=3301) Before building vllm rollout, memory allocated (GB): 0.92",
    "(vLLMHttpServer pid=3520) INFO 11-24 06:33:51 [__init__.py:216] Automatically detected "
    "platform cuda.",
    "(vLLMHttpServer pid=3520) INFO 11-24 06:34:02 [gpu_model_runner.py:2602] Model loading "
    "took 0.9276 GiB and 2.114891 seconds",
    "(vLLMHttpServer pid=3520) INFO 11-24 06:34:09 [gpu_worker.py:298] Available KV cache "
    "memory: 61.03 GiB",
    "(vLLMHttpServer pid=3520) INFO 11-24 06:34:15 [core.py:210] init engine (profile, create "
    "kv cache, warmup model) took 12.87 seconds",
    DEMO_TASK_RUNNER "Saving tensorboard log to tensorboard.",
    DEMO_TASK_RUNNER "Creating file logger at /workspace/demo/metrics.jsonl",
  };

  g_string_append (s, "verl==0.9.0\nvllm==0.11.0\ntorch==2.8.0\nray==2.49.2\n");
  g_string_append (s, "2026-11-24 06:33:34,118\tINFO worker.py:1942 -- Started a local Ray "
                      "instance. View the dashboard at \033[1m\033[32m127.0.0.1:8265 \033[39m"
                      "\033[22m\n");
  g_string_append (s, "ray init kwargs: {'num_cpus': None, 'runtime_env': {'env_vars': "
                      "{'TOKENIZERS_PARALLELISM': 'true', 'NCCL_DEBUG': 'WARN', "
                      "'VLLM_LOGGING_LEVEL': 'WARN'}}}\n");
  /* pprint (width 80, keys sorted) of a part of the resolved config; the rollout_correction
   * block is the demo's own */
  g_string_append (config,
                   "{'actor_rollout_ref': {'actor': {'clip_ratio': 0.2,\n"
                   "                                 'optim': {'lr': 1e-06},\n"
                   "                                 'ppo_mini_batch_size': 16,\n"
                   "                                 'strategy': 'fsdp'},\n"
                   "                       'model': {'path': 'Qwen/Qwen2.5-0.5B-Instruct'},\n"
                   "                       'rollout': {'calculate_log_probs': True,\n"
                   "                                   'mode': 'async',\n"
                   "                                   'n': 8,\n"
                   "                                   'name': 'vllm'}},\n"
                   " 'algorithm': {'_target_': 'verl.trainer.config.AlgoConfig',\n"
                   "               'adv_estimator': 'grpo',\n"
                   "               'kl_ctrl': {'kl_coef': 0.001, 'type': 'fixed'},\n"
                   "               ");
  append_rollout_correction (config, &d->config, 38);
  g_string_append_printf (config,
                          "},\n"
                          " 'data': {'max_prompt_length': 512,\n"
                          "          'max_response_length': %d,\n"
                          "          'train_batch_size': %d},\n"
                          " 'trainer': {'experiment_name': '%s',\n"
                          "             'logger': ['console', 'file', 'tensorboard'],\n"
                          "             'n_gpus_per_node': 8,\n"
                          "             'project_name': 'driftwatch_demo',\n"
                          "             'total_training_steps': %u,\n"
                          "             'use_v1': True}}\n",
                          DW_DEMO_COLS, DW_DEMO_ROWS / DEMO_GROUP, experiment, d->steps);
  {
    g_auto (GStrv) lines = g_strsplit (config->str, "\n", -1);

    for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
      {
        g_string_append_printf (s, DEMO_TASK_RUNNER "%s\n", lines[i]);
        /* Ray forwards each process's output as it comes: another process's line lands in
         * between */
        if (i == 6)
          g_string_append (s, raylet);
      }
  }
  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    g_string_append_printf (s, "%s\n", engines[i]);
  return s;
}

static gboolean
append_file (const char *path, const char *data, gsize len, GError **error)
{
  FILE *f = fopen (path, "ab");
  int saved;

  if (f != NULL && fwrite (data, 1, len, f) == len && fflush (f) == 0 && fclose (f) == 0)
    return TRUE;
  saved = errno;
  if (f != NULL)
    fclose (f);
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _ ("%s: cannot write: %s"), path,
               g_strerror (saved));
  return FALSE;
}

DwDemo *
dw_demo_new (const char *outdir, DwDemoScenario scenario, guint steps, guint64 seed, GError **error)
{
  g_autoptr (DwDemo) d = g_new0 (DwDemo, 1);
  g_autofree char *tb_dir = NULL, *events_name = NULL;
  DwCorrectionError cerr;
  g_autoptr (GString) header = g_string_new (NULL);
  g_autoptr (GString) preamble = NULL;

  g_return_val_if_fail (outdir != NULL, NULL);
  d->outdir = g_strdup (outdir);
  d->scenario = scenario;
  d->steps = steps;
  d->seed = seed;
  d->rand = g_rand_new_with_seed_array (
    (const guint32[]){ (guint32)seed, (guint32)(seed >> 32), scenario }, 3);
  d->wall_time = DEMO_START_TIME;
  /* the release the name "verl" means: the log, its printed config and a recompute agree */
  dw_config_init (&d->config, DW_GEN_VERL_LATEST);
  if (!dw_preset_apply (&d->config, "decoupled_k3_rs_token_tis", &cerr))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", cerr.message);
      return NULL;
    }
  /* A looser K3 bound than the preset's 0.01, so rejection starts shortly before the collapse
   * rather than swallowing whole batches during the slow drift. */
  {
    DwValue threshold = dw_value_float (0.05);
    dw_config_set (&d->config, "rollout_rs_threshold", &threshold);
  }

  tb_dir = g_build_filename (outdir, "tensorboard", NULL);
  d->batch_dir = g_build_filename (outdir, "batches", NULL);
  events_name = g_strdup_printf ("events.out.tfevents.%.0f.driftwatch-demo.0", DEMO_START_TIME);
  d->events_path = g_build_filename (tb_dir, events_name, NULL);
  d->jsonl_path = g_build_filename (outdir, "metrics.jsonl", NULL);
  d->console_path = g_build_filename (outdir, "train.log", NULL);
  for (const char *dir = tb_dir; dir != NULL; dir = dir == tb_dir ? d->batch_dir : NULL)
    if (g_mkdir_with_parents (dir, 0755) != 0)
      {
        int saved = errno;
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                     _ ("%s: cannot create the folder: %s"), dir, g_strerror (saved));
        return NULL;
      }
  /* Start afresh: verl's FileLogger truncates too; batches of an earlier demo go. */
  {
    g_autoptr (GDir) dir = g_dir_open (d->batch_dir, 0, NULL);
    const char *name;

    while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
      if (g_str_has_prefix (name, "step_") && g_str_has_suffix (name, ".safetensors"))
        {
          g_autofree char *old = g_build_filename (d->batch_dir, name, NULL);
          g_unlink (old);
        }
  }
  put_file_version (header, d->wall_time);
  preamble = demo_console_preamble (d);
  if (!g_file_set_contents (d->console_path, preamble->str, (gssize)preamble->len, error)
      || !g_file_set_contents (d->jsonl_path, "", 0, error)
      || !g_file_set_contents (d->events_path, header->str, (gssize)header->len, error))
    return NULL;
  return g_steal_pointer (&d);
}

void
dw_demo_free (DwDemo *d)
{
  if (d == NULL)
    return;
  g_free (d->outdir);
  g_free (d->jsonl_path);
  g_free (d->events_path);
  g_free (d->console_path);
  g_free (d->batch_dir);
  if (d->rand != NULL)
    g_rand_free (d->rand);
  g_free (d);
}

gboolean
dw_demo_write_step (DwDemo *d, gboolean *done, GError **error)
{
  g_autoptr (DwBatch) batch = NULL;
  g_autoptr (GString) json = g_string_new (NULL);
  g_autoptr (GString) events = g_string_new (NULL);
  g_autoptr (GString) console = g_string_new (DEMO_TASK_RUNNER);
  g_autoptr (GHashTable) meta = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *batch_name = NULL, *batch_path = NULL, *step_str = NULL;
  DwCorrectionResult res;
  DwCorrectionError cerr;
  BatchFacts f;
  StepOut o;
  gint64 step;
  double grad_norm, step_time, k3;

  if (d->step >= d->steps)
    {
      *done = TRUE;
      return TRUE;
    }
  step = ++d->step;
  batch = make_batch (d, step, &f);
  step_time = 28.0 + 4.0 * g_rand_double (d->rand) + f.len_mean * 0.02;
  d->wall_time += step_time;

  batch_name = g_strdup_printf ("step_%06" G_GINT64_FORMAT ".safetensors", step);
  batch_path = g_build_filename (d->batch_dir, batch_name, NULL);
  step_str = g_strdup_printf ("%" G_GINT64_FORMAT, step);
  g_hash_table_insert (meta, "step", step_str);
  g_hash_table_insert (meta, "framework", "verl");
  g_hash_table_insert (meta, "mask_semantics", "pre_rs");
  if (!dw_batch_write_safetensors_full (batch, batch_path, DW_BATCH_WRITE_DEFAULT, meta, error))
    return FALSE;

  dw_correction_result_init (&res);
  if (!dw_correction_run (batch, &d->config, &res, &cerr))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "step %" G_GINT64_FORMAT ": %s", step,
                   cerr.message);
      return FALSE;
    }
  {
    const double *v = dw_correction_result_get (&res, "rollout_corr/k3_kl");
    k3 = v != NULL ? *v : 0.0;
  }

  o.json = json;
  o.events = events;
  o.console = console;
  o.step = step;
  g_string_append_printf (console, "step:%" G_GINT64_FORMAT, step);
  o.wall_time = d->wall_time;
  g_string_append_printf (json, "{\"step\":%" G_GINT64_FORMAT ",\"data\":{", step);
  /* In the order verl's fit() logs them. */
  emit_int (&o, "global_seqlen/mean", f.n_tokens / 2 + 24 * DW_DEMO_ROWS / 2);
  emit (&o, "actor/entropy", f.entropy);
  emit (&o, "training/rollout_probs_diff_max", f.pdiff_max);
  emit (&o, "training/rollout_probs_diff_mean", f.pdiff_mean);
  emit (&o, "training/rollout_probs_diff_std", f.pdiff_std);
  for (size_t i = 0; i < res.n_metrics; i++)
    emit (&o, res.metrics[i].key, res.metrics[i].value);
  grad_norm = 0.25 + 0.05 * g_rand_double (d->rand) + 12.0 * MIN (k3, 1.0);
  if (d->scenario == DW_DEMO_COLLAPSE && step >= dw_demo_collapse_step (d->steps))
    grad_norm *= 5.0 + 10.0 * g_rand_double (d->rand);
  emit (&o, "actor/pg_loss", 0.02 * gauss (d->rand) - 0.01 * f.adv_mean);
  emit (&o, "actor/pg_clipfrac", 0.001 + 0.002 * g_rand_double (d->rand) + 0.5 * MIN (k3, 0.5));
  emit (&o, "actor/ppo_kl", 1e-4 * g_rand_double (d->rand) + k3 * 0.1);
  emit (&o, "actor/pg_clipfrac_lower", 0.0);
  emit (&o, "actor/grad_norm", grad_norm);
  emit (&o, "actor/lr", 1e-6);
  emit_int (&o, "training/global_step", step);
  emit_int (&o, "training/epoch", 0);
  emit (&o, "critic/score/mean", f.score_mean);
  emit (&o, "critic/score/max", f.score_max);
  emit (&o, "critic/score/min", f.score_min);
  emit (&o, "critic/rewards/mean", f.score_mean);
  emit (&o, "critic/advantages/mean", f.adv_mean);
  emit (&o, "critic/advantages/max", f.adv_max);
  emit (&o, "critic/advantages/min", f.adv_min);
  emit (&o, "response_length/mean", f.len_mean);
  emit (&o, "response_length/max", f.len_max);
  emit (&o, "response_length/min", f.len_min);
  emit (&o, "response_length/clip_ratio", f.clip_ratio);
  emit (&o, "prompt_length/mean", 96.0 + 8.0 * gauss (d->rand));
  emit (&o, "timing_s/step", step_time);
  emit (&o, "perf/total_num_tokens", (double)f.n_tokens);
  emit (&o, "perf/throughput", (double)f.n_tokens / step_time);
  if (step % 20 == 0)
    emit (&o, "val-core/openai/gsm8k/reward/mean@1",
          CLAMP (demo_accuracy (d, step) + 0.03 * gauss (d->rand), 0.0, 1.0));
  g_string_append (json, "}}\n");
  g_string_append_c (console, '\n');
  dw_correction_result_clear (&res);

  if (!append_file (d->console_path, console->str, console->len, error)
      || !append_file (d->jsonl_path, json->str, json->len, error)
      || !append_file (d->events_path, events->str, events->len, error))
    return FALSE;
  *done = d->step >= d->steps;
  return TRUE;
}

gboolean
dw_demo_write (const char *outdir, DwDemoScenario scenario, guint steps, guint64 seed,
               GError **error)
{
  g_autoptr (DwDemo) d = dw_demo_new (outdir, scenario, steps, seed, error);
  gboolean done = steps == 0;

  if (d == NULL)
    return FALSE;
  while (!done)
    if (!dw_demo_write_step (d, &done, error))
      return FALSE;
  return TRUE;
}
