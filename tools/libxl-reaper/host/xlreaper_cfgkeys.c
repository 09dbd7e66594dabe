/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_cfgkeys.c - listing the keys of an xl.cfg-syntax text.
 *
 * libxlutil parses and validates the file, but its interface cannot list
 * the keys it read; xl itself ignores unknown keys.  In a security
 * config a mistyped key must not fall back to a default silently, so
 * this walk finds each `key =` (and `key +=`) with its line, following
 * the lexer of libxlu_cfg_l.l: identifiers [a-z][._0-9a-z]*, '#'
 * comments to the end of the line, quoted strings with backslash
 * escapes, and lists in [] that may span lines.  It runs only on text
 * libxlutil has accepted.
 */
#include <string.h>

#include "xlreaper_host.h"

#define MAX_KEY 64

static bool ident_start(char c)
{
    return c >= 'a' && c <= 'z';
}

static bool ident_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '_';
}

/* The length of the value that starts at text[i]: a quoted string (its
 * quotes included), a list to its closing bracket, or a bare token to
 * the first blank, ';', '#' or end of line. */
static size_t value_len(const char *text, size_t len, size_t i)
{
    size_t j = i;
    unsigned depth = 0;

    if (i >= len)
        return 0;
    if (text[i] != '\'' && text[i] != '"' && text[i] != '[') {
        while (j < len && text[j] != ' ' && text[j] != '\t' &&
               text[j] != '\n' && text[j] != ';' && text[j] != '#')
            j++;
        return j - i;
    }
    do {
        char c = text[j];

        if (c == '\'' || c == '"') {
            for (j++; j < len && text[j] != c && text[j] != '\n'; j++)
                if (text[j] == '\\' && j + 1 < len)
                    j++;
            j++;
        } else if (c == '[') {
            depth++;
            j++;
        } else if (c == ']') {
            depth--;
            j++;
        } else if (c == '#') {
            while (j < len && text[j] != '\n')
                j++;
        } else {
            j++;
        }
    } while (depth && j < len);
    return (j > len ? len : j) - i;
}

typedef struct {
    int (*fn)(void *arg, const char *key, unsigned line);
    void *arg;
} key_only;

static int call_key_only(void *arg, const char *key, unsigned line,
                         const char *value, size_t n)
{
    key_only *k = arg;

    (void)value;
    (void)n;
    return k->fn(k->arg, key, line);
}

int xlreaper__cfg_each_key(const char *text, size_t len,
                           int (*fn)(void *arg, const char *key,
                                     unsigned line),
                           void *arg)
{
    key_only k = { fn, arg };

    return xlreaper__cfg_each_value(text, len, call_key_only, &k);
}

int xlreaper__cfg_each_value(const char *text, size_t len,
                             int (*fn)(void *arg, const char *key,
                                       unsigned line, const char *value,
                                       size_t value_len),
                             void *arg)
{
    size_t i = 0;
    unsigned line = 1, depth = 0;
    bool at_start = true;
    int rc;

    while (i < len) {
        char c = text[i];

        if (c == ' ' || c == '\t') {
            i++;
        } else if (c == '\n') {
            line++;
            i++;
            if (!depth)
                at_start = true;
        } else if (c == '#') {
            while (i < len && text[i] != '\n')
                i++;
        } else if (c == '\'' || c == '"') {
            for (i++; i < len && text[i] != c && text[i] != '\n'; i++)
                if (text[i] == '\\' && i + 1 < len)
                    i++;
            i++;
            at_start = false;
        } else if (c == '[') {
            depth++;
            i++;
        } else if (c == ']') {
            if (depth)
                depth--;
            i++;
        } else if (c == ';' && !depth) {
            at_start = true;
            i++;
        } else if (at_start && ident_start(c)) {
            char key[MAX_KEY + 1];
            size_t k = 0, j = i;

            while (j < len && ident_char(text[j])) {
                if (k < MAX_KEY)
                    key[k++] = text[j];
                j++;
            }
            key[k] = '\0';
            i = j;
            while (i < len && (text[i] == ' ' || text[i] == '\t'))
                i++;
            if (i < len && (text[i] == '=' || (text[i] == '+' && i + 1 < len &&
                                               text[i + 1] == '='))) {
                size_t v = i + (text[i] == '+' ? 2 : 1);

                while (v < len && (text[v] == ' ' || text[v] == '\t'))
                    v++;
                rc = fn(arg, key, line, text + v, value_len(text, len, v));
                if (rc)
                    return rc;
            }
            at_start = false;
        } else {
            at_start = false;
            i++;
        }
    }
    return 0;
}
