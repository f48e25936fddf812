// SPDX-License-Identifier: GPL-2.0
/* kmod/stream.c compiled into spulse_kunit.ko (see kmod_noexport.h). */
#include "kmod_noexport.h"
#include "../../kmod/stream.c"
