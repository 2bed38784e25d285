package data

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The fixtures of testdata/parquet were written by Apache Arrow's Go
// implementation (scripts/parquetfixtures), not by the library kernelkit
// reads with: mixed.csv holds the rows of the two mixed files.
const fixtures = "testdata/parquet"

// fixtureMeta returns the metadata of a fixture, read with the library.
func fixtureMeta(t *testing.T, name string) *format.FileMetaData {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf.Metadata()
}

// TestParquetFixtures (issue 38): files written by another
// implementation load as the CSV file of their rows does — several row
// groups and pages, dictionary encoding (v1 pages, Snappy), plain, delta
// and byte-stream-split encodings (v2 pages, zstd), an optional column
// without nulls, INT32, INT64, unsigned INT32, FLOAT, DOUBLE and BOOLEAN
// columns — in memory, in batches, and with a weight column and several
// targets chosen by name.
func TestParquetFixtures(t *testing.T) {
	csvPath := filepath.Join(fixtures, "mixed.csv")
	for _, c := range []struct {
		name      string
		encodings map[string]format.Encoding // a column's encoding the file must use
		groups    int
	}{
		{"mixed-v1-dict-snappy.parquet", map[string]format.Encoding{"a": format.RLEDictionary, "b": format.RLEDictionary, "d": format.RLEDictionary}, 4},
		{"mixed-v2-plain-zstd.parquet", map[string]format.Encoding{"a": format.Plain, "b": format.DeltaBinaryPacked, "d": format.ByteStreamSplit}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(fixtures, c.name)
			meta := fixtureMeta(t, c.name)
			if len(meta.RowGroups) != c.groups || !strings.Contains(meta.CreatedBy, "parquetfixtures") {
				t.Fatalf("%d row groups written by %q, want %d by arrow-go", len(meta.RowGroups), meta.CreatedBy, c.groups)
			}
			for _, se := range meta.Schema {
				if se.Name == "c" && (!se.RepetitionType.Valid || se.RepetitionType.V != format.Optional) {
					t.Errorf("column c is not optional")
				}
			}
			for _, cc := range meta.RowGroups[0].Columns {
				name := cc.MetaData.PathInSchema[0]
				if want, ok := c.encodings[name]; ok && !slices.Contains(cc.MetaData.Encoding, want) {
					t.Errorf("column %s has encodings %v, not %v", name, cc.MetaData.Encoding, want)
				}
			}
			for _, opt := range []OpenOptions{{}, {Weight: "u", Targets: []string{"d", "b"}}, {Columns: []string{"u", "e", "d", "c", "b", "a"}, Label: "label"}} {
				want, err := Open(csvPath, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Open(path, opt)
				if err != nil {
					t.Fatalf("%+v: %v", opt, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%+v: the Parquet rows differ from the CSV rows", opt)
				}
			}
			whole, err := Open(csvPath, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := OpenParquet(path, CSVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for row, size := 0, 1; row < whole.Rows(); size = size*3 + 1 {
				x, y, err := f.Read(size)
				if err != nil {
					t.Fatalf("batch at row %d: %v", row, err)
				}
				n, _ := x.Dims()
				for i := range n {
					if !reflect.DeepEqual(x.RawRowView(i), whole.X.RawRowView(row+i)) || y[i] != whole.Y[row+i] {
						t.Fatalf("row %d differs", row+i)
					}
				}
				row += n
			}
			if err := f.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestParquetFixtureNull (issue 38): a null in a file written by another
// implementation is refused in one line naming the file, the row group,
// the column and the row, in memory and streamed.
func TestParquetFixtureNull(t *testing.T) {
	path := filepath.Join(fixtures, "null.parquet")
	want := path + `: data: Parquet row group 2, column "x", row 733: a null value (kernelkit reads no missing values: fill or drop the row)`
	if _, err := Open(path, OpenOptions{}); err == nil || err.Error() != want {
		t.Errorf("in memory: %v, want %s", err, want)
	}
	f, err := OpenParquet(path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for range 20 {
		if _, last = f.ReadBatch(100); last != nil {
			break
		}
	}
	if last == nil || last.Error() != want {
		t.Errorf("streamed: %v, want %s", last, want)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
}
