/* timeutil.h - calendar arithmetic without locale or TZ (UTC only). */
#ifndef CULPRIT_TIMEUTIL_H
#define CULPRIT_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Days since 1970-01-01 of a proleptic Gregorian date. */
int64_t cp_days_from_civil(int64_t y, unsigned m, unsigned d);
/* The inverse. */
void cp_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
/* Milliseconds since the epoch of Jan 1 00:00 of year y. */
int64_t cp_year_start_ms(int64_t y);
/* Year of an epoch time in ms. */
int64_t cp_year_of_ms(int64_t ms);
/* "2026-11-29 16:19:32.295" */
void cp_format_ms(int64_t ms, char *buf, size_t n);

#endif
