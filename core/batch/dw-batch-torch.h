/* dw-batch-torch.h — torch.save files: zip container, data.pkl, storages (private to core/batch)
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-batch-private.h"
#include "dw-pickle.h"

G_BEGIN_DECLS

typedef struct _DwTorchFile DwTorchFile;

/* Opens the archive, reads <prefix>/data.pkl with the restricted unpickler. The source's fd may
 * be closed afterwards (libzip holds its own). */
DwTorchFile *dw_batch_torch_open (const DwSource *src, GError **error);
void dw_batch_torch_close (DwTorchFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DwTorchFile, dw_batch_torch_close)

const char *dw_batch_torch_get_name (const DwTorchFile *file);
const DwPickleValue *dw_batch_torch_get_root (const DwTorchFile *file);
/* ", refused globals: posix.system (offset 12)" or "" — to append to messages. */
char *dw_batch_torch_refused_note (const DwTorchFile *file);

/* The values of a tensor (any layout, via its strides) or of a list/tuple of numbers, in C
 * order, as doubles; @src_dtype gets the tensor's dtype (F64 for Python lists). @where names the
 * value in messages ("samples[3].log_probs"). */
double *dw_batch_torch_numbers (DwTorchFile *file, const DwPickleValue *value, const char *where,
                                guint64 *n, DwDType *src_dtype, GError **error);

G_END_DECLS
