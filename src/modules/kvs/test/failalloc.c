/* failalloc.c - see failalloc.h */
#include <stdlib.h>
#include <errno.h>
#include "failalloc.h"

void *__real_calloc (size_t nmemb, size_t size);
void *__wrap_calloc (size_t nmemb, size_t size);

static int countdown = -1;      /* callocs left before the failure; -1 off */
static bool fired;

void *__wrap_calloc (size_t nmemb, size_t size)
{
    if (countdown == 0) {
        countdown = -1;
        fired = true;
        errno = ENOMEM;
        return NULL;
    }
    if (countdown > 0)
        countdown--;
    return __real_calloc (nmemb, size);
}

void failalloc_arm (int skip)
{
    countdown = skip < 0 ? 0 : skip;
    fired = false;
}

void failalloc_disarm (void)
{
    countdown = -1;
}

bool failalloc_fired (void)
{
    return fired;
}
