/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dw-lsan-keep-libs.c — keep every shared library mapped until LeakSanitizer has reported.
 *
 * LeakSanitizer walks the heap after exit(). A library that was dlclose()d before then (Mesa's DRI
 * driver after the display closes, for instance) leaves its frames as "<unknown module>", which no
 * suppression in tests/lsan.supp can name, so a leak inside a system library fails the test on one
 * machine and not on another, depending on what that machine has installed. Linked only into the
 * UI test programs of sanitizer builds: this definition takes the place of the C library's (and
 * of the sanitizer's interceptor, which is weak), so nothing is ever unmapped and every frame keeps
 * its library name.
 */
#include <dlfcn.h>

int
dlclose (void *handle)
{
  (void)handle;
  return 0;
}
