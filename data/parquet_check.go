package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// MaxParquetFooterBytes is the largest footer (file metadata) of a
// Parquet file that the readers accept: 256 MiB, as MaxLineBytes bounds a
// text line.
const MaxParquetFooterBytes = 1 << 28

// maxPageHeaderBytes is the largest page header read: headers of the
// numeric columns kernelkit reads take tens of bytes (statistics of
// numbers included).
const maxPageHeaderBytes = 64 << 10

// errThriftShort reports thrift data that runs past the end of its bytes.
var errThriftShort = errors.New("truncated")

// thriftWalk walks thrift compact-protocol data without decoding it, to
// check, before the Parquet library decodes the same bytes, that every
// size the data declare fits in the bytes that remain: a string's
// length, a list's, set's or map's count (each element takes at least one
// byte), and the nesting depth. The library allocates a list of the
// declared count, or a string of the declared length, before it reads
// the elements; checked this way, what it allocates is bounded by the
// bytes it was given, not by a number a damaged or hostile file states.
type thriftWalk struct {
	b   []byte
	off int
}

// maxThriftDepth bounds the nesting of thrift structures (Parquet's own
// metadata nests a few levels).
const maxThriftDepth = 32

func (w *thriftWalk) byte1() (byte, error) {
	if w.off >= len(w.b) {
		return 0, errThriftShort
	}
	c := w.b[w.off]
	w.off++
	return c, nil
}

func (w *thriftWalk) skip(n uint64) error {
	if n > uint64(len(w.b)-w.off) {
		return errThriftShort
	}
	w.off += int(n)
	return nil
}

func (w *thriftWalk) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.off:])
	switch {
	case n == 0:
		return 0, errThriftShort
	case n < 0:
		return 0, errors.New("varint overflows 64 bits")
	}
	w.off += n
	return v, nil
}

// structure walks one structure, up to and including its stop byte.
func (w *thriftWalk) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("structures nested more than %d deep", maxThriftDepth)
	}
	for {
		h, err := w.byte1()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil
		}
		if h>>4 == 0 { // the field id follows as a zigzag varint
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h&0x0f, depth, true); err != nil {
			return err
		}
	}
}

// value walks one value of compact type t; inField is whether it is a
// structure's field, where booleans have no bytes of their own.
func (w *thriftWalk) value(t byte, depth int, inField bool) error {
	switch t {
	case 1, 2: // boolean true, false
		if inField {
			return nil
		}
		return w.skip(1)
	case 3: // byte
		return w.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := w.uvarint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary, string
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case 9, 10: // list, set
		h, err := w.byte1()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if n > uint64(len(w.b)-w.off) {
			return fmt.Errorf("a list of %d elements in %d bytes", n, len(w.b)-w.off)
		}
		for range n {
			if err := w.value(h&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte1()
		if err != nil {
			return err
		}
		if n > uint64(len(w.b)-w.off)/2 {
			return fmt.Errorf("a map of %d entries in %d bytes", n, len(w.b)-w.off)
		}
		for range n {
			if err := w.value(kv>>4, depth+1, false); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 12: // structure
		return w.structure(depth + 1)
	}
	return fmt.Errorf("unknown thrift type %d", t)
}

// checkThrift walks the thrift structure at the start of b and returns
// its length in bytes.
func checkThrift(b []byte) (int, error) {
	w := &thriftWalk{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.off, nil
}

// checkParquetFooter checks the frame of the Parquet file r of size bytes
// (the magic bytes at both ends, the footer's length) and walks its
// footer with checkThrift, before the library reads it.
func checkParquetFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("not a Parquet file (%d bytes, no room for its magic bytes and footer)", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	switch {
	case string(tail[4:]) == "PARE":
		return errors.New("the file is encrypted (magic PARE); kernelkit reads plain Parquet files")
	case string(head[:4]) != "PAR1" || string(tail[4:]) != "PAR1":
		return errors.New("not a Parquet file (no magic bytes PAR1 at its start and end)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return fmt.Errorf("the footer of %d bytes does not fit in a file of %d bytes", n, size)
	}
	if n > MaxParquetFooterBytes {
		return fmt.Errorf("the footer of %s is above the limit of %s", limits.Bytes(float64(n)), limits.Bytes(MaxParquetFooterBytes))
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return err
	}
	got, err := checkThrift(b)
	if err != nil {
		return fmt.Errorf("damaged footer: %w", err)
	}
	if got != len(b) {
		return fmt.Errorf("damaged footer: %d bytes after its metadata", len(b)-got)
	}
	return nil
}

// checkChunk walks the page headers of one column chunk (md, of a row
// group of rows rows) in the file r of size bytes before the library
// reads its pages, and checks every size they declare: each page lies
// inside the chunk, its values are at most the row group's rows (and sum
// to them), its uncompressed size is at most 16 bytes a value and 64 KiB
// (what the encodings of numbers and their levels take, with room to
// spare), a Snappy page's stated length is its uncompressed size, and an
// LZ4 page decompresses within it, so that the library allocates for the
// pages no more than the data need. (The library's LZ4 decoder doubles its
// buffer on any error, without end for a damaged block.)
func checkChunk(r io.ReaderAt, size int64, cc *format.ColumnChunk, rows int64) error {
	if cc.FilePath != "" {
		return fmt.Errorf("the column chunk is in another file (%s); kernelkit reads single-file Parquet", quote(cc.FilePath))
	}
	md := &cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	if start < 4 || md.TotalCompressedSize < 0 || md.TotalCompressedSize > size-8-start {
		return fmt.Errorf("the column chunk's %d bytes at offset %d are not inside the file's %d bytes", md.TotalCompressedSize, start, size)
	}
	end := start + md.TotalCompressedSize
	buf := make([]byte, 256)
	var values int64
	var hdr format.PageHeader
	for off := start; off < end; {
		hlen, err := readPageHeader(r, off, end, &buf, &hdr)
		if err != nil {
			return fmt.Errorf("page header at offset %d: %w", off, err)
		}
		comp, uncomp := int64(hdr.CompressedPageSize), int64(hdr.UncompressedPageSize)
		if comp < 0 || uncomp < 0 || comp > end-off-int64(hlen) {
			return fmt.Errorf("page at offset %d: %d bytes do not fit in the column chunk", off, comp)
		}
		var n int64                  // values the page declares
		payload := off + int64(hlen) // where the compressed bytes start (−1: none)
		compLen := comp              // how many there are
		switch hdr.Type {
		case format.DataPage:
			if !hdr.DataPageHeader.Valid {
				return fmt.Errorf("data page at offset %d has no data page header", off)
			}
			n = int64(hdr.DataPageHeader.V.NumValues)
		case format.DataPageV2:
			if !hdr.DataPageHeaderV2.Valid {
				return fmt.Errorf("data page at offset %d has no data page header", off)
			}
			v := &hdr.DataPageHeaderV2.V
			n = int64(v.NumValues)
			levels := int64(v.DefinitionLevelsByteLength) + int64(v.RepetitionLevelsByteLength)
			if v.DefinitionLevelsByteLength < 0 || v.RepetitionLevelsByteLength < 0 || levels > comp || v.NumNulls < 0 || int64(v.NumNulls) > n {
				return fmt.Errorf("data page at offset %d: levels of %d bytes or %d nulls do not fit in its %d bytes and %d values", off, levels, v.NumNulls, comp, n)
			}
			if v.IsCompressed.Valid && !v.IsCompressed.V {
				payload = -1 // not compressed
			} else {
				payload, compLen = payload+levels, comp-levels
			}
		case format.DictionaryPage:
			if !hdr.DictionaryPageHeader.Valid {
				return fmt.Errorf("dictionary page at offset %d has no dictionary page header", off)
			}
			if d := int64(hdr.DictionaryPageHeader.V.NumValues); d < 0 || d > rows {
				return fmt.Errorf("dictionary page at offset %d has %d entries for %d rows", off, d, rows)
			}
			if uncomp > 16*int64(hdr.DictionaryPageHeader.V.NumValues)+maxPageHeaderBytes {
				return fmt.Errorf("dictionary page at offset %d declares %d bytes for %d entries", off, uncomp, hdr.DictionaryPageHeader.V.NumValues)
			}
		default:
			return fmt.Errorf("page at offset %d is of type %v, not a data or dictionary page", off, hdr.Type)
		}
		if hdr.Type != format.DictionaryPage {
			if n < 0 || n > rows-values {
				return fmt.Errorf("data page at offset %d holds %d values, beyond the row group's %d rows", off, n, rows)
			}
			if uncomp > 16*n+maxPageHeaderBytes {
				return fmt.Errorf("data page at offset %d declares %d bytes for %d values", off, uncomp, n)
			}
			values += n
		}
		if payload >= 0 && compLen > 0 {
			var err error
			switch md.Codec {
			case format.Snappy:
				err = checkSnappy(r, payload, end, uncomp)
			case format.Lz4Raw:
				err = checkLZ4(r, payload, compLen, uncomp)
			}
			if err != nil {
				return fmt.Errorf("page at offset %d: %w", off, err)
			}
		}
		off += int64(hlen) + comp
	}
	if values != rows {
		return fmt.Errorf("the column chunk holds %d values for the row group's %d rows", values, rows)
	}
	return nil
}

// readPageHeader decodes the page header at off (before end) into hdr,
// checked by checkThrift first, and returns its length. *buf is the read
// window, grown once to maxPageHeaderBytes for a long header.
func readPageHeader(r io.ReaderAt, off, end int64, buf *[]byte, hdr *format.PageHeader) (int, error) {
	for {
		b := (*buf)[:min(int64(len(*buf)), end-off)]
		if _, err := r.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && len(b) > 0) {
			return 0, err
		}
		n, err := checkThrift(b)
		if errors.Is(err, errThriftShort) && len(b) == len(*buf) && len(*buf) < maxPageHeaderBytes {
			*buf = make([]byte, maxPageHeaderBytes)
			continue
		}
		if err != nil {
			if errors.Is(err, errThriftShort) && len(b) == maxPageHeaderBytes {
				return 0, fmt.Errorf("longer than the limit of %s", limits.Bytes(maxPageHeaderBytes))
			}
			return 0, err
		}
		*hdr = format.PageHeader{}
		var proto thrift.CompactProtocol
		if err := thrift.NewDecoder(proto.NewReaderFromBytes(b[:n])).Decode(hdr); err != nil {
			return 0, err
		}
		return n, nil
	}
}

// checkSnappy checks that the Snappy block at off (before end) states the
// uncompressed length want, which the library allocates before it checks.
func checkSnappy(r io.ReaderAt, off, end, want int64) error {
	var b [binary.MaxVarintLen64]byte
	s := b[:min(int64(len(b)), end-off)]
	if _, err := r.ReadAt(s, off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	got, n := binary.Uvarint(s)
	if n <= 0 || got != uint64(want) {
		return fmt.Errorf("the Snappy block's length is not the page's uncompressed size %d", want)
	}
	return nil
}

// checkLZ4 checks that the LZ4 block of n bytes at off decompresses into
// at most want bytes: the library retries a block that does not with
// twice the buffer, whatever the error, so a damaged block would take
// all memory.
func checkLZ4(r io.ReaderAt, off, n, want int64) error {
	src := make([]byte, n)
	if _, err := r.ReadAt(src, off); err != nil {
		return err
	}
	if _, err := lz4.UncompressBlock(src, make([]byte, want)); err != nil {
		return fmt.Errorf("the LZ4 block does not decompress into the page's uncompressed size %d: %v", want, err)
	}
	return nil
}
