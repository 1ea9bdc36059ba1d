/* stub */
#ifndef MK_H5UTIL_H
#define MK_H5UTIL_H
#endif
