#ifndef STORERELAY_COPENSSL_H
#define STORERELAY_COPENSSL_H
/* Every API OpenSSL 3 deprecates is hidden from StoreRelay: a call to one does not compile.
   The trust path must run on OpenSSL's maintained code, and the build must not depend on
   functions a later OpenSSL may drop. */
#define OPENSSL_NO_DEPRECATED
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/core_names.h>
#include <openssl/rsa.h>

/* EVP_PKEY_PUBLIC_KEY is an expression macro, which Swift does not import. */
static const int STORERELAY_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;
#endif
