/* dw-dtype.c — the element types of batch arrays: numpy names and sizes
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * libc only; declared in dw-batch.h.
 */
#include "dw-batch.h"

static const struct
{
  const char *name;
  size_t size;
} dw_dtype_table[DW_N_DTYPES] = {
  [DW_DTYPE_F32] = { "float32", 4 },   [DW_DTYPE_F64] = { "float64", 8 },
  [DW_DTYPE_BF16] = { "bfloat16", 2 }, [DW_DTYPE_F16] = { "float16", 2 },
  [DW_DTYPE_BOOL] = { "bool", 1 },     [DW_DTYPE_U8] = { "uint8", 1 },
  [DW_DTYPE_I8] = { "int8", 1 },       [DW_DTYPE_I16] = { "int16", 2 },
  [DW_DTYPE_I32] = { "int32", 4 },     [DW_DTYPE_I64] = { "int64", 8 },
  [DW_DTYPE_U16] = { "uint16", 2 },    [DW_DTYPE_U32] = { "uint32", 4 },
  [DW_DTYPE_U64] = { "uint64", 8 },
};

size_t
dw_dtype_size (DwDType dtype)
{
  return (unsigned)dtype < DW_N_DTYPES ? dw_dtype_table[dtype].size : 0;
}

const char *
dw_dtype_name (DwDType dtype)
{
  return (unsigned)dtype < DW_N_DTYPES ? dw_dtype_table[dtype].name : "unknown";
}
