/* SPDX-License-Identifier: Apache-2.0 */
/* html_unescape.h - Python's html.unescape (Lib/html/__init__.py, HTML5
 * rules): named references from html.entities.html5 with and without ';'
 * (the longest known prefix of an unknown name), decimal and hexadecimal
 * references with the replacement table for invalid numbers. */
#ifndef SAMC_TEXT_HTML_UNESCAPE_H
#define SAMC_TEXT_HTML_UNESCAPE_H

#include "core/text/text_internal.h"

/* out = html.unescape(in) (out is overwritten; in and out must differ).
 * SAMC_ERR_ARG when a decimal reference has more than 4300 digits: Python
 * 3.11's int() refuses those and the official tokenizer raises ValueError.
 * SAMC_ERR_NOMEM on allocation failure. */
samc_status samc__html_unescape(const samc__ustr *in, samc__ustr *out, samc_error *err);

/* Generated tables (html5_entities.c, tools/gen_text_tables.py). */
extern const samc__entity samc__html5_entities[];
extern const size_t samc__html5_n_entities;
extern const samc__cpmap samc__html_invalid_charrefs[];
extern const size_t samc__html_n_invalid_charrefs;
extern const samc__cprange samc__html_invalid_codepoints[];
extern const size_t samc__html_n_invalid_codepoints;

#endif
