package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
)

// isSequenceModel reports whether the file at path is an inference file
// of a sequence model (it begins with seqmodel.Magic). A file that cannot
// be read is not one; the ridge model's reader reports why.
func isSequenceModel(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	b := make([]byte, len(seqmodel.Magic))
	n, rerr := io.ReadFull(f, b)
	cerr := f.Close()
	return rerr == nil && cerr == nil && seqmodel.IsInferenceFile(b[:n])
}

// seqRows are the sequences of a data file for a sequence model: their
// token ids (cut to the model's length), the labels when the file has a
// Target column (else nil), and the number of sequences cut.
type seqRows struct {
	seqs   [][]int32
	labels []int
	cut    int
}

// runSeq is predict for a sequence model's inference file (kernelkit
// export): the rows of an LRA TSV file (a header with a Source column and
// optionally Target) or one sequence per line, tokenised by the model's
// tokenizer; sequences longer than the model's length are cut to it, as
// training cuts them, with a warning.
func (o *predictOptions) runSeq(cmd *cobra.Command) error {
	if o.label != "" || o.weight != "" {
		return errors.New("--label and --weight-column apply to ridge models; a sequence model's labels are the Target column of an LRA TSV file")
	}
	if o.data == "" {
		return errors.New("--data is required: an LRA TSV file (Source and, to measure the accuracy, Target columns) or one sequence per line")
	}
	m, err := seqmodel.LoadFile(o.model)
	if err != nil {
		return err
	}
	var est limits.Estimate
	if st, err := os.Stat(o.data); err == nil && st.Mode().IsRegular() {
		// The text and its token ids: at most one token per two bytes.
		est.AddBytes("data", float64(st.Size()))
		est.Add32("token ids", int(st.Size()/2+1))
		if err := checkMemory(cmd, est); err != nil {
			return err
		}
	}
	rows, err := readSeqRows(o.data, o.format, m)
	if err != nil {
		return err
	}
	n, k := len(rows.seqs), len(m.Classes())
	est.Add("logits and probabilities", 2, n, k)
	if err := checkMemory(cmd, est); err != nil {
		return err
	}
	if rows.cut > 0 {
		if err := notice(cmd, "warning: %d of %d sequences are longer than the model's length %d; the model sees only their first %d tokens",
			rows.cut, n, m.MaxLength(), m.MaxLength()); err != nil {
			return err
		}
	}
	s, err := m.NewScorer(seqmodel.ScorerOptions{MaxMemory: memoryBudget(cmd)})
	if err != nil {
		return err
	}
	z, err := s.Logits(commandContext(cmd), rows.seqs)
	if err != nil {
		return err
	}
	probs := seqmodel.Probabilities(z, k)
	pred := seqmodel.Labels(z, k)
	header := "prediction"
	if o.scores { // in linear time, as ridge predictions' (model.AppendClassColumns)
		header = string(model.AppendClassColumns(model.AppendClassColumns([]byte(header), "score", k), "prob", k))
	}
	if err := writeOut(cmd, o.out, func(w io.Writer) error {
		return writeRows(commandContext(cmd), w, header, n, func(b []byte, i int) []byte {
			b = strconv.AppendInt(b, int64(pred[i]), 10)
			for j := 0; o.scores && j < k; j++ {
				b = strconv.AppendFloat(append(b, ','), float64(z[i*k+j]), 'g', -1, 32)
			}
			for j := 0; o.scores && j < k; j++ {
				b = strconv.AppendFloat(append(b, ','), probs[i*k+j], 'g', -1, 64)
			}
			return b
		})
	}); err != nil || rows.labels == nil {
		return err
	}
	correct := 0
	for i, l := range rows.labels {
		if pred[i] == l {
			correct++
		}
	}
	pm := mat.NewDense(n, k, probs)
	ll, err := calibrate.LogLoss(pm, rows.labels)
	if err != nil {
		return err
	}
	ece, err := calibrate.ECE(pm, rows.labels, 15)
	if err != nil {
		return err
	}
	return notice(cmd, "accuracy %.4f, log-loss %.4f, ECE %.4f (15 bins) on %d rows", float64(correct)/float64(n), ll, ece, n)
}

// readSeqRows reads the sequences of path: format "auto" reads an LRA
// TSV file when its first line has a Source column (tab-separated) and
// one sequence per line otherwise; "tsv" and "lines" say which. Blank
// lines are skipped. A TSV file's Target column, if any, holds class
// names of the model (the tasks' classes are "0" … "9"). Errors name the
// line.
func readSeqRows(path, format string, m *seqmodel.Model) (rows seqRows, err error) {
	switch format {
	case "auto", "tsv", "lines":
	default:
		return rows, fmt.Errorf("--format %.20q: a sequence model reads auto, tsv (LRA TSV: Source and Target columns) or lines (one sequence per line)", format)
	}
	f, err := os.Open(path)
	if err != nil {
		return rows, err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	class := map[string]int{}
	for i, c := range m.Classes() {
		class[c] = i
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), tasks.MaxLineBytes)
	src, tgt, fields := -1, -1, 0
	read := 0 // lines read
	for line := 1; sc.Scan(); line++ {
		read = line
		text := strings.TrimSuffix(sc.Text(), "\r")
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
			header := strings.Split(text, "\t")
			for i, h := range header {
				switch strings.TrimSpace(h) {
				case "Source":
					src = i
				case "Target":
					tgt = i
				}
			}
			switch {
			case format == "tsv" && src < 0:
				return rows, fmt.Errorf("%s: the TSV header %.60q lacks a Source column", path, text)
			case src >= 0 && format != "lines":
				fields = len(header)
				if tgt >= 0 {
					rows.labels = []int{}
				}
				continue
			}
			src, tgt = -1, -1
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		source := text
		if src >= 0 {
			f := strings.Split(text, "\t")
			if len(f) != fields {
				return rows, fmt.Errorf("%s: line %d has %d fields, the header %d", path, line, len(f), fields)
			}
			source = f[src]
			if tgt >= 0 {
				c, ok := class[strings.TrimSpace(f[tgt])]
				if !ok {
					return rows, fmt.Errorf("%s: line %d: target %.20q is not a class of the model (%s)", path, line, f[tgt], strings.Join(m.Classes(), ", "))
				}
				rows.labels = append(rows.labels, c)
			}
		}
		ids, err := m.Tokenize(source)
		if err != nil {
			return rows, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if len(ids) == 0 {
			return rows, fmt.Errorf("%s: line %d: %w", path, line, seqmodel.ErrEmpty)
		}
		if len(ids) > m.MaxLength() {
			ids = ids[:m.MaxLength()]
			rows.cut++
		}
		rows.seqs = append(rows.seqs, ids)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = &tasks.LineTooLongError{Line: read + 1}
		}
		return rows, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows.seqs) == 0 {
		return rows, fmt.Errorf("%s has no sequences", path)
	}
	return rows, nil
}
