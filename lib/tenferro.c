/* lib/tenferro.c — the implementation unit that `make lib` compiles into libtenferro.a and
 * libtenferro.so: every public function defined once, with external linkage. */
#define TFE_IMPLEMENTATION
#include <tenferro.h>
