/* stub */
#include "config.h"
#include "maskkit.h"
