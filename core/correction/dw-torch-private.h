/* dw-torch-private.h — kept for modules written before dw-torch.h was public; include dw-torch.h
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#pragma once

#include "dw-torch.h"
