/*
 * etcd_json.h - the JSON side of etcd's v3 gateway, with no transport:
 * keys and values travel base64, 64-bit numbers as strings, a prefix is a
 * range up to its end key. What builds requests and reads answers (the
 * designs' state machine, impls/etcd/etcd_machine.c, which must not touch
 * libcurl) includes this alone; the connections (etcd_conn.h) include it
 * too. The functions are defined in etcd_conn.c.
 */
#ifndef LOCKLAB_ETCD_JSON_H
#define LOCKLAB_ETCD_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Where every design keeps its keys: ETCD_KEY_PREFIX "<key>" (etcd-lease)
 * and the keys under ETCD_KEY_PREFIX "<key>/" (etcd-mutex, etcd-lock-api). */
#define ETCD_KEY_PREFIX "locklab/"

/* base64 of len bytes of s as a JSON string (a new reference). */
json_t *etcd_b64(const char *s, size_t len);
/* ... of the C string s. */
json_t *etcd_b64s(const char *s);
/* The bytes a base64 JSON string holds, NUL-terminated into out; their
 * length, or -1 when v is not base64 or does not fit. */
int etcd_unb64(const json_t *v, char *out, size_t outlen);

/* A 64-bit field as the gateway writes it (a string, or a number), 0 when
 * absent: etcd_num(obj, "header", "revision", NULL). */
int64_t etcd_num(const json_t *obj, ...);

/* The key just after every key that starts with prefix (its range_end). */
json_t *etcd_prefix_end(const char *prefix);

#endif
