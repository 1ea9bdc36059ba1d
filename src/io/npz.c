/*
 * .npz archives: a zip file (PKWARE's APPNOTE) whose members are .npy files.
 *
 * Writing: each member is a local header, its name and its bytes, stored
 * (method 0).  The caller's emitter puts the bytes twice, first for the
 * CRC-32 the local header must hold, then to write them, so no member is
 * kept in memory and the output is never sought back into (it may be a
 * pipe or a device).  The central directory and the end record follow the
 * last member.  Dates are fixed (1980-01-01, as numpy writes them): the same
 * arrays give the same bytes.
 *
 * Reading: the end record is looked for in the file's last 64 KiB + 22
 * bytes; with ZIP64, its locator leads to the 64-bit end record.  Sizes, CRCs
 * and offsets come from the central directory (with the ZIP64 extra field
 * where one is 0xffffffff: numpy's np.savez writes ZIP64 local headers); a
 * member's local header only says where its data starts.  Every offset is
 * checked against the file before it is read, every member's CRC after.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "npz.h"

#define MK_ZIP_LOCAL 0x04034b50u
#define MK_ZIP_CENTRAL 0x02014b50u
#define MK_ZIP_END 0x06054b50u
#define MK_ZIP64_END 0x06064b50u
#define MK_ZIP64_LOCATOR 0x07064b50u
#define MK_ZIP_VERSION 20
#define MK_ZIP_DATE 0x0021 /* 1980-01-01 */
#define MK_ZIP_MAX32 0xffffffffu
#define MK_NPZ_MAX_MEMBERS 256 /* a layout has 7 */
#define MK_NPZ_MAX_NAME 255
#define MK_NPZ_MAX_CD ((uint64_t)1 << 24)

static void mk_zip_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void mk_zip_put32(uint8_t *p, uint32_t v)
{
	mk_zip_put16(p, v & 0xffff);
	mk_zip_put16(p + 2, v >> 16);
}

static uint32_t mk_zip_get16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t mk_zip_get32(const uint8_t *p)
{
	return mk_zip_get16(p) | mk_zip_get16(p + 2) << 16;
}

static uint64_t mk_zip_get64(const uint8_t *p)
{
	return (uint64_t)mk_zip_get32(p) | (uint64_t)mk_zip_get32(p + 4) << 32;
}

static uint32_t mk_npz_crc(uint32_t crc, const void *p, size_t len)
{
	const Bytef *b = p;

	while (len > 0) { /* zlib's lengths are uInt */
		uInt k = len > ((size_t)1 << 30) ? (uInt)1 << 30 : (uInt)len;
		crc = (uint32_t)crc32(crc, b, k);
		b += k;
		len -= k;
	}
	return crc;
}

/* ---- writing --------------------------------------------------------------- */

struct mk_npz_wentry {
	char name[MK_NPZ_MAX_NAME + 1];
	uint32_t crc, size, offset;
};

void mk_npz_put(mk_npz_sink *s, const void *p, size_t len)
{
	s->crc = mk_npz_crc(s->crc, p, len);
	s->bytes += len;
	if (s->f && len)
		(void)fwrite(p, 1, len, s->f); /* mk_npz_finish checks ferror */
}

void mk_npz_put_i32(mk_npz_sink *s, int32_t v)
{
	uint8_t b[4];
	mk_zip_put32(b, (uint32_t)v);
	mk_npz_put(s, b, sizeof b);
}

/* A local header (30 bytes) or a central directory entry (46) of e, and
 * its name: the two share the fields from "version needed" to the name's
 * length, 4 and 6 bytes into them. */
static void mk_npz_record(mk_npz_writer *z, const struct mk_npz_wentry *e, bool central)
{
	uint8_t h[46] = {0}, *p = h + (central ? 6 : 4);
	size_t len = central ? 46 : 30, nlen = strlen(e->name);

	mk_zip_put32(h, central ? MK_ZIP_CENTRAL : MK_ZIP_LOCAL);
	if (central) {
		mk_zip_put16(h + 4, MK_ZIP_VERSION); /* made by */
		mk_zip_put32(h + 42, e->offset);
	}
	mk_zip_put16(p, MK_ZIP_VERSION);
	mk_zip_put16(p + 8, MK_ZIP_DATE);
	mk_zip_put32(p + 10, e->crc);
	mk_zip_put32(p + 14, e->size); /* stored: compressed and */
	mk_zip_put32(p + 18, e->size); /* uncompressed sizes agree */
	mk_zip_put16(p + 22, (uint32_t)nlen);
	(void)fwrite(h, 1, len, z->f);
	(void)fwrite(e->name, 1, nlen, z->f);
	z->offset += len + nlen;
}

/* MK_ERANGE unless a member of `data` bytes, its headers and the directory
 * entries of all the members so far still fit below zip32's 4 GiB. */
static int mk_npz_room(const mk_npz_writer *z, const char *name, uint64_t data)
{
	uint64_t headers = 30 + (z->count + 1) * (46 + 2 * MK_NPZ_MAX_NAME) + 22 + 256;

	if (data < MK_ZIP_MAX32 - headers && z->offset < MK_ZIP_MAX32 - headers - data)
		return MK_OK;
	return mk_error_set(MK_ERANGE, "member '%s' would take the .npz past 4 GiB, the most a "
			    "zip without ZIP64 holds (use a larger block size)", name);
}

int mk_npz_add(mk_npz_writer *z, const char *name, const char *descr, size_t itemsize,
	       int ndim, const int64_t *shape, mk_npz_emit emit, void *ctx)
{
	struct mk_npz_wentry *e, *grown;
	mk_npz_sink first = {0}, second = {.f = z->f};
	uint64_t data = itemsize;
	char head[256], fname[MK_NPZ_MAX_NAME + 1];
	size_t hlen = mk_npy_header(descr, ndim, shape, head, sizeof head);
	int ret = MK_OK;

	if (hlen == 0 || (size_t)snprintf(fname, sizeof fname, "%s.npy", name) >= sizeof fname)
		return mk_error_set(MK_EINTERNAL, "npz member '%s': name or header too long", name);
	for (int k = 0; k < ndim && ret == MK_OK; k++)
		ret = mk_mul_u64(data, (uint64_t)shape[k], &data);
	if (ret == MK_OK)
		ret = mk_npz_room(z, fname, data < MK_ZIP_MAX32 ? data + hlen : data);
	if (ret)
		return ret;
	if (!(grown = realloc(z->e, (z->count + 1) * sizeof *z->e)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	z->e = grown;
	mk_npz_put(&first, head, hlen);
	emit(ctx, &first);
	if (first.bytes != hlen + data)
		return mk_error_set(MK_EINTERNAL, "npz member '%s': %" PRIu64 " bytes, expected %"
				    PRIu64, name, first.bytes, hlen + data);
	e = &z->e[z->count];
	*e = (struct mk_npz_wentry){.crc = first.crc, .size = (uint32_t)first.bytes,
				    .offset = (uint32_t)z->offset};
	memcpy(e->name, fname, sizeof fname);
	mk_npz_record(z, e, false);
	mk_npz_put(&second, head, hlen);
	emit(ctx, &second);
	if (second.crc != first.crc || second.bytes != first.bytes)
		return mk_error_set(MK_EINTERNAL, "npz member '%s' changed between passes", name);
	z->offset += second.bytes;
	z->count++;
	return MK_OK;
}

int mk_npz_finish(mk_npz_writer *z, int status)
{
	uint64_t cd_offset = z->offset;
	uint8_t end[22] = {0};

	for (size_t k = 0; k < z->count && status == MK_OK; k++)
		mk_npz_record(z, &z->e[k], true);
	if (status == MK_OK) {
		mk_zip_put32(end, MK_ZIP_END);
		mk_zip_put16(end + 8, (uint32_t)z->count);
		mk_zip_put16(end + 10, (uint32_t)z->count);
		mk_zip_put32(end + 12, (uint32_t)(z->offset - cd_offset));
		mk_zip_put32(end + 16, (uint32_t)cd_offset);
		(void)fwrite(end, 1, sizeof end, z->f);
	}
	free(z->e);
	z->e = NULL;
	z->count = 0;
	if (status == MK_OK && ferror(z->f))
		status = mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
	return status;
}

/* ---- reading the directory --------------------------------------------------- */

static int mk_npz_damaged(const mk_npz *z, const char *what)
{
	return mk_error_set(MK_EFORMAT, "'%s': damaged zip archive: %s", z->path, what);
}

/* Reads len bytes at off, which must lie within the file. */
static int mk_npz_pread(mk_npz *z, uint64_t off, void *buf, size_t len, const char *what)
{
	if (off > z->size || len > z->size - off)
		return mk_npz_damaged(z, what);
	if (fseeko(z->f, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, len, z->f) != len)
		return mk_error_set(MK_ESYS, "'%s': read failed: %s", z->path,
				    ferror(z->f) ? strerror(errno) : "file shrank while reading");
	return MK_OK;
}

/* The ZIP64 end record, through its locator just before the end record. */
static int mk_npz_end64(mk_npz *z, uint64_t end_at, uint64_t *n, uint64_t *cd_size,
			uint64_t *limit)
{
	uint8_t loc[20], rec[56];
	uint64_t at;
	int ret;

	if (end_at < sizeof loc)
		return mk_npz_damaged(z, "no ZIP64 end record locator");
	ret = mk_npz_pread(z, end_at - sizeof loc, loc, sizeof loc, "no ZIP64 end record locator");
	if (ret == MK_OK && mk_zip_get32(loc) != MK_ZIP64_LOCATOR)
		ret = mk_npz_damaged(z, "no ZIP64 end record locator");
	if (ret)
		return ret;
	at = mk_zip_get64(loc + 8);
	if (at > end_at - sizeof loc || end_at - sizeof loc - at < sizeof rec)
		return mk_npz_damaged(z, "the ZIP64 end record lies outside the file");
	ret = mk_npz_pread(z, at, rec, sizeof rec, "the ZIP64 end record lies outside the file");
	if (ret == MK_OK && mk_zip_get32(rec) != MK_ZIP64_END)
		ret = mk_npz_damaged(z, "bad ZIP64 end record");
	if (ret)
		return ret;
	if (mk_zip_get32(rec + 16) || mk_zip_get32(rec + 20) || mk_zip_get64(rec + 24) !=
	    mk_zip_get64(rec + 32))
		return mk_error_set(MK_EFORMAT, "'%s': multi-disk zip archives are not read",
				    z->path);
	*n = mk_zip_get64(rec + 32);
	*cd_size = mk_zip_get64(rec + 40);
	z->cd_offset = mk_zip_get64(rec + 48);
	*limit = at;
	return MK_OK;
}

/* Finds the end record: the last signature whose comment ends in the file. */
static int64_t mk_npz_find_end(const uint8_t *buf, size_t len)
{
	for (size_t pos = len - 22 + 1; pos-- > 0;)
		if (mk_zip_get32(buf + pos) == MK_ZIP_END &&
		    pos + 22 + mk_zip_get16(buf + pos + 20) <= len)
			return (int64_t)pos;
	return -1;
}

static int mk_npz_end(mk_npz *z, uint64_t *n, uint64_t *cd_size)
{
	size_t tail = z->size < 22 + 65535 ? (size_t)z->size : 22 + 65535;
	uint8_t *buf = NULL, *e;
	uint64_t end_at, limit;
	int64_t pos;
	int ret;

	if (z->size < 22)
		return mk_error_set(MK_EFORMAT, "'%s': not a .npz file: %" PRIu64 " bytes, too "
				    "short for a zip archive", z->path, z->size);
	if (!(buf = malloc(tail)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	ret = mk_npz_pread(z, z->size - tail, buf, tail, "short file");
	if (ret == MK_OK && (pos = mk_npz_find_end(buf, tail)) < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': not a .npz file: no zip end record (not a zip "
				   "archive, or a truncated one)", z->path);
	if (ret)
		goto out;
	e = buf + pos;
	end_at = limit = z->size - tail + (uint64_t)pos;
	*n = mk_zip_get16(e + 10);
	*cd_size = mk_zip_get32(e + 12);
	z->cd_offset = mk_zip_get32(e + 16);
	if (*n == 0xffff || *cd_size == MK_ZIP_MAX32 || z->cd_offset == MK_ZIP_MAX32)
		ret = mk_npz_end64(z, end_at, n, cd_size, &limit);
	else if (mk_zip_get16(e + 4) || mk_zip_get16(e + 6) || mk_zip_get16(e + 8) != *n)
		ret = mk_error_set(MK_EFORMAT, "'%s': multi-disk zip archives are not read", z->path);
	if (ret == MK_OK && (z->cd_offset > limit || *cd_size > limit - z->cd_offset))
		ret = mk_npz_damaged(z, "the central directory lies outside the file");
out:
	free(buf);
	return ret;
}

/* Replaces the 0xffffffff fields of e from a ZIP64 extra field. */
static int mk_npz_zip64_extra(const mk_npz *z, mk_npz_entry *e, const uint8_t *x, size_t len)
{
	uint64_t *fields[3] = {&e->usize, &e->csize, &e->offset};

	while (len >= 4) {
		uint32_t id = mk_zip_get16(x), size = mk_zip_get16(x + 2);
		const uint8_t *p = x + 4, *end = x + 4 + size;
		if (size > len - 4)
			return mk_npz_damaged(z, "bad extra field in the central directory");
		for (int k = 0; id == 1 && k < 3; k++) {
			if (*fields[k] != MK_ZIP_MAX32)
				continue;
			if (end - p < 8)
				return mk_npz_damaged(z, "short ZIP64 extra field");
			*fields[k] = mk_zip_get64(p);
			p += 8;
		}
		x = end;
		len -= 4 + size;
	}
	return MK_OK;
}

/* Parses the central directory entry at cd + *pos into e. */
static int mk_npz_entry_parse(mk_npz *z, const uint8_t *cd, uint64_t len, uint64_t *pos,
			      mk_npz_entry *e)
{
	const uint8_t *p = cd + *pos;
	uint32_t flags, nlen, xlen, clen;
	int ret;

	if (len - *pos < 46 || mk_zip_get32(p) != MK_ZIP_CENTRAL)
		return mk_npz_damaged(z, "bad central directory entry");
	flags = mk_zip_get16(p + 8);
	e->method = (uint16_t)mk_zip_get16(p + 10);
	e->crc = mk_zip_get32(p + 16);
	e->csize = mk_zip_get32(p + 20);
	e->usize = mk_zip_get32(p + 24);
	nlen = mk_zip_get16(p + 28);
	xlen = mk_zip_get16(p + 30);
	clen = mk_zip_get16(p + 32);
	e->offset = mk_zip_get32(p + 42);
	if (len - *pos - 46 < (uint64_t)nlen + xlen + clen)
		return mk_npz_damaged(z, "the central directory is cut short");
	if (nlen == 0 || nlen > MK_NPZ_MAX_NAME || memchr(p + 46, '\0', nlen))
		return mk_error_set(MK_EFORMAT, "'%s': a member with an empty or bad name", z->path);
	if (!(e->name = strndup((const char *)p + 46, nlen)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = mk_npz_zip64_extra(z, e, p + 46 + nlen, xlen)))
		return ret;
	if (flags & 1)
		return mk_error_set(MK_EFORMAT, "'%s': member '%s' is encrypted", z->path, e->name);
	if (e->method != 0 && e->method != 8)
		return mk_error_set(MK_EFORMAT, "'%s': member '%s' uses compression method %u (only "
				    "stored and deflated members are read)", z->path, e->name,
				    (unsigned)e->method);
	*pos += 46 + (uint64_t)nlen + xlen + clen;
	return MK_OK;
}

static int mk_npz_central(mk_npz *z, uint64_t n, uint64_t cd_size)
{
	uint64_t pos = 0;
	uint8_t *cd;
	int ret;

	if (n > MK_NPZ_MAX_MEMBERS || cd_size > MK_NPZ_MAX_CD)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRIu64 " members in %" PRIu64 " bytes of "
				    "directory: more than a block layout has", z->path, n, cd_size);
	cd = malloc((size_t)cd_size + 1);
	z->e = calloc((size_t)n + 1, sizeof *z->e);
	if (!cd || !z->e)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else
		ret = mk_npz_pread(z, z->cd_offset, cd, (size_t)cd_size,
				   "the central directory lies outside the file");
	for (uint64_t k = 0; k < n && ret == MK_OK; k++, z->count++)
		ret = mk_npz_entry_parse(z, cd, cd_size, &pos, &z->e[k]);
	if (ret == MK_OK && pos != cd_size)
		ret = mk_npz_damaged(z, "stray bytes after the central directory's entries");
	for (size_t k = 0; k < z->count && ret == MK_OK; k++)
		for (size_t l = 0; l < k && ret == MK_OK; l++)
			if (strcmp(z->e[k].name, z->e[l].name) == 0)
				ret = mk_error_set(MK_EFORMAT, "'%s': member '%s' appears twice",
						   z->path, z->e[k].name);
	free(cd);
	return ret;
}

int mk_npz_open(const char *path, mk_npz *z)
{
	uint64_t n = 0, cd_size = 0;
	struct stat st;
	int ret;

	*z = (mk_npz){.path = path};
	if ((ret = mk_input_open(path, (void **)&z->f)))
		return ret;
	if (fstat(fileno(z->f), &st) != 0)
		return mk_error_errno(errno, "'%s'", path);
	z->size = (uint64_t)st.st_size;
	ret = mk_npz_end(z, &n, &cd_size);
	return ret ? ret : mk_npz_central(z, n, cd_size);
}

void mk_npz_close(mk_npz *z)
{
	for (size_t k = 0; k < z->count; k++)
		free(z->e[k].name);
	free(z->e);
	if (z->f)
		fclose(z->f);
	*z = (mk_npz){.path = z->path};
}

/* ---- reading a member -------------------------------------------------------- */

int64_t mk_npz_find(const mk_npz *z, const char *name)
{
	size_t len = strlen(name);

	for (size_t k = 0; k < z->count; k++) {
		const char *m = z->e[k].name;
		if (!strncmp(m, name, len) && (!m[len] || !strcmp(m + len, ".npy")))
			return (int64_t)k;
	}
	return -1;
}

/* Where member e's data starts, from its local header (which must name it). */
static int mk_npz_data_at(mk_npz *z, const mk_npz_entry *e, uint64_t *at)
{
	uint8_t h[30 + MK_NPZ_MAX_NAME];
	size_t nlen = strlen(e->name);
	uint64_t start;
	int ret;

	if (e->offset > z->cd_offset || z->cd_offset - e->offset < 30 + nlen)
		return mk_error_set(MK_EFORMAT, "'%s': damaged zip archive: member '%s' lies outside "
				    "the archive's data", z->path, e->name);
	ret = mk_npz_pread(z, e->offset, h, 30 + nlen, "a member lies past the end of the file");
	if (ret)
		return ret;
	if (mk_zip_get32(h) != MK_ZIP_LOCAL || mk_zip_get16(h + 26) != nlen ||
	    memcmp(h + 30, e->name, nlen) != 0)
		return mk_error_set(MK_EFORMAT, "'%s': damaged zip archive: member '%s' has no "
				    "local header of its own", z->path, e->name);
	start = e->offset + 30 + nlen + mk_zip_get16(h + 28);
	if (start > z->cd_offset || e->csize > z->cd_offset - start ||
	    (e->method == 0 && e->csize != e->usize))
		return mk_error_set(MK_EFORMAT, "'%s': damaged zip archive: member '%s' is cut "
				    "short or overlaps the directory", z->path, e->name);
	*at = start;
	return MK_OK;
}

/* A member read in pieces: deflated data inflated as it is read, so that
 * neither the compressed nor the inflated member is ever held whole. */

int mk_npz_reader_open(mk_npz *z, size_t k, mk_npz_reader *r)
{
	const mk_npz_entry *e = &z->e[k];
	int ret;

	*r = (mk_npz_reader){.z = z, .e = e};
	ret = mk_npz_data_at(z, e, &r->at);
	if (ret)
		return ret;
	r->in_left = e->csize;
	if (e->method != 8)
		return MK_OK;
	if (!(r->in = malloc(MK_NPZ_CHUNK)) || !(r->s = calloc(1, sizeof *r->s)) ||
	    inflateInit2(r->s, -MAX_WBITS) != Z_OK) {
		free(r->s);
		r->s = NULL;
		return mk_error_set(MK_ENOMEM, "out of memory (zlib)");
	}
	return MK_OK;
}

static int mk_npz_reader_short(const mk_npz_reader *r, const char *why)
{
	return mk_error_set(MK_EFORMAT, "'%s': member '%s': %s", r->z->path, r->e->name, why);
}

/* Inflates into buf[0..len) from the file; *got: bytes given, short only at
 * the end of the deflate stream. */
static int mk_npz_reader_inflate(mk_npz_reader *r, uint8_t *buf, size_t len, size_t *got)
{
	z_stream *s = r->s;
	int zr = Z_OK;

	s->next_out = buf;
	s->avail_out = (uInt)len;
	while (s->avail_out > 0 && zr != Z_STREAM_END) {
		if (s->avail_in == 0 && r->in_left > 0) {
			size_t take = r->in_left < MK_NPZ_CHUNK ? (size_t)r->in_left : MK_NPZ_CHUNK;
			int ret = mk_npz_pread(r->z, r->at, r->in, take, "a member is cut short");
			if (ret)
				return ret;
			r->at += take;
			r->in_left -= take;
			s->next_in = r->in;
			s->avail_in = (uInt)take;
		}
		zr = inflate(s, Z_NO_FLUSH);
		if (zr == Z_BUF_ERROR && s->avail_in == 0 && r->in_left == 0)
			return mk_npz_reader_short(r, "its deflate data is cut short");
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return mk_npz_reader_short(r, zr == Z_MEM_ERROR ? "out of memory (zlib)"
						      : "corrupt deflate data");
	}
	*got = len - s->avail_out;
	return MK_OK;
}

int mk_npz_reader_read(mk_npz_reader *r, void *buf, size_t len)
{
	size_t got = 0;
	int ret = MK_OK;

	if (len > r->e->usize - r->done)
		return mk_npz_reader_short(r, "its data ends before its header says");
	if (!r->s)
		ret = mk_npz_pread(r->z, r->at + r->done, buf, len, "a member is cut short");
	/* zlib counts in uInt: at most 1 GiB a call */
	for (size_t off = 0; r->s && off < len && ret == MK_OK; off += got) {
		size_t step = len - off < ((size_t)1 << 30) ? len - off : (size_t)1 << 30;
		ret = mk_npz_reader_inflate(r, (uint8_t *)buf + off, step, &got);
		if (ret == MK_OK && got != step)
			ret = mk_npz_reader_short(r, "its deflate data does not give its recorded "
						     "size");
	}
	if (ret)
		return ret;
	r->done += len;
	r->crc = mk_npz_crc(r->crc, buf, len);
	return MK_OK;
}

int mk_npz_reader_finish(mk_npz_reader *r)
{
	uint8_t extra;
	size_t got = 0;
	int ret = MK_OK;

	if (r->done != r->e->usize)
		return mk_npz_reader_short(r, "more data than its header says");
	/* the stream must end here: one byte more shows a longer one */
	if (r->s && (ret = mk_npz_reader_inflate(r, &extra, 1, &got)) == MK_OK && got)
		ret = mk_npz_reader_short(r, "its deflate data does not give its recorded size");
	if (ret == MK_OK && r->crc != r->e->crc)
		ret = mk_error_set(MK_EFORMAT, "'%s': damaged zip archive: member '%s' fails its "
				   "CRC check", r->z->path, r->e->name);
	return ret;
}

void mk_npz_reader_close(mk_npz_reader *r)
{
	if (r->s) {
		inflateEnd(r->s);
		free(r->s);
	}
	free(r->in);
	*r = (mk_npz_reader){0};
}
