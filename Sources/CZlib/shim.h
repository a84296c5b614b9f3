#ifndef STORERELAY_CZLIB_H
#define STORERELAY_CZLIB_H
#include <zlib.h>
#endif
