/* placeholder */
#include "config.h"
typedef int mk_placeholder_colsum;
