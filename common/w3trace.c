/*
 * w3trace.c: W3C traceparent parse/format and child span contexts for the
 * OTel tracer, pure logic (see w3trace.h).
 */
#include "common/w3trace.h"

#include <string.h>

static int
hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return (ch - '0');
	if (ch >= 'a' && ch <= 'f')
		return (ch - 'a' + 10);
	return (-1);
}

/* n bytes from 2n lowercase hex digits; false on any other character. */
static bool
unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return (false);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (true);
}

static void
tohex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
}

static bool
all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return (false);
	return (true);
}

static bool
layout_ok(const char *s, size_t len, uint8_t version)
{
	if (len < W3T_TRACEPARENT_LEN || s[2] != '-' || s[35] != '-'
	        || s[52] != '-')
		return (false);
	if (version == 0xff)
		return (false);
	if (version == 0)
		return (len == W3T_TRACEPARENT_LEN);
	return (len == W3T_TRACEPARENT_LEN || s[W3T_TRACEPARENT_LEN] == '-');
}

bool
w3t_parse(const char *s, struct w3t_ctx *out)
{
	uint8_t version;
	size_t len = s != NULL ? strlen(s) : 0;

	memset(out, 0, sizeof(*out));
	if (len < W3T_TRACEPARENT_LEN || !unhex(s, &version, 1))
		return (false);
	if (!layout_ok(s, len, version) || !unhex(s + 3, out->trace_id, 16)
	        || !unhex(s + 36, out->span_id, 8)
	        || !unhex(s + 53, &out->flags, 1))
		return (false);
	if (all_zero(out->trace_id, 16) || all_zero(out->span_id, 8))
		return (false);
	out->flags &= 1; /* only the sampled bit is kept, as OTel Go */
	out->valid = true;
	return (true);
}

void
w3t_child(const struct w3t_ctx *parent, const uint8_t rnd[W3T_RANDOM_LEN],
        struct w3t_ctx *out)
{
	bool joined = parent != NULL && parent->valid;

	memset(out, 0, sizeof(*out));
	memcpy(out->trace_id, joined ? parent->trace_id : rnd, 16);
	memcpy(out->span_id, rnd + 16, 8);
	if (all_zero(out->trace_id, 16))
		out->trace_id[15] = 1;
	if (all_zero(out->span_id, 8))
		out->span_id[7] = 1;
	out->flags = joined ? (parent->flags & 1) : 1;
	out->valid = true;
}

void
w3t_format(const struct w3t_ctx *c, char buf[W3T_TRACEPARENT_LEN + 1])
{
	buf[0] = '\0';
	if (!c->valid)
		return;
	memcpy(buf, "00-", 3);
	tohex(c->trace_id, 16, buf + 3);
	buf[35] = '-';
	tohex(c->span_id, 8, buf + 36);
	buf[52] = '-';
	buf[53] = '0';
	buf[54] = (c->flags & 1) ? '1' : '0';
	buf[55] = '\0';
}

void
w3t_trace_id_hex(const struct w3t_ctx *c, char buf[33])
{
	buf[0] = '\0';
	if (!c->valid)
		return;
	tohex(c->trace_id, 16, buf);
	buf[32] = '\0';
}
