package train

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
)

// TestExportMatchesEvaluate trains every kind a few steps on the native
// engine, exports the trainer (Trainer.Export) and the checkpoint it wrote
// (ExportFile): the same bytes. The inference model, loaded from the file,
// scores the test rows in forward passes of the training batch — the
// passes of Trainer.Predict, which Evaluate (train --evaluate) runs — with
// logits equal to Predict's bit for bit, and so the same labels and
// accuracy.
func TestExportMatchesEvaluate(t *testing.T) {
	data, test := toyData(t, 48, 7), toyData(t, 32, 8)
	for _, kind := range arch.Kinds {
		t.Run(kind, func(t *testing.T) {
			cfg := toyConfig(kind)
			cfg.Steps = 4
			cfg.Checkpoint = filepath.Join(t.TempDir(), "a.ckpt")
			tr, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Fit(context.Background(), data, nil); err != nil {
				t.Fatal(err)
			}
			want, err := tr.Predict(test)
			if err != nil {
				t.Fatal(err)
			}
			acc, _, err := tr.Evaluate(test)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tr.Export()
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "m.kks")
			if err := ExportFile(cfg.Checkpoint, out, 0); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := m.Write(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), raw) {
				t.Error("the trainer's export and the checkpoint's differ")
			}
			loaded, err := seqmodel.LoadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if h := loaded.Header(); h.Step != 4 || h.Seed != cfg.Seed || h.MaxLength != cfg.Model.Length {
				t.Errorf("header step %d, seed %d, length %d", h.Step, h.Seed, h.MaxLength)
			}
			s, err := loaded.NewScorer(seqmodel.ScorerOptions{MaxBatch: cfg.Batch})
			if err != nil {
				t.Fatal(err)
			}
			seqs := make([][]int32, len(test))
			for i, e := range test {
				seqs[i] = e.Tokens
			}
			z, err := s.Logits(context.Background(), seqs)
			if err != nil {
				t.Fatal(err)
			}
			C := cfg.Model.Classes
			correct := 0
			labels := seqmodel.Labels(z, C)
			for i, row := range want {
				for j, v := range row {
					if math.Float32bits(float32(v)) != math.Float32bits(z[i*C+j]) {
						t.Fatalf("row %d: inference logits %v, Predict's %v", i, z[i*C:(i+1)*C], row)
					}
				}
				if labels[i] == test[i].Label {
					correct++
				}
			}
			if got := float64(correct) / float64(len(test)); got != acc {
				t.Errorf("accuracy %v, Evaluate's %v", got, acc)
			}
		})
	}
}

// TestExportGoMLX: a model trained on GoMLX's backend exports from its
// context, and the native engine scores it within the float32 bound of
// package train's cross-engine test (TestEnginesShareCheckpoints).
func TestExportGoMLX(t *testing.T) {
	data := toyData(t, 48, 7)
	for _, kind := range []string{arch.KindTNN, arch.KindPerformer} {
		cfg := toyConfig(kind)
		cfg.Steps, cfg.Device = 2, "go"
		cfg.Checkpoint = filepath.Join(t.TempDir(), "g.ckpt")
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Fit(context.Background(), data, nil); err != nil {
			t.Fatal(err)
		}
		want, err := tr.Predict(data[:16])
		if err != nil {
			t.Fatal(err)
		}
		m, err := tr.Export()
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.NewScorer(seqmodel.ScorerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seqs := make([][]int32, 16)
		for i := range seqs {
			seqs[i] = data[i].Tokens
		}
		z, err := s.Logits(context.Background(), seqs)
		if err != nil {
			t.Fatal(err)
		}
		got := make([][]float64, 16)
		for i := range got {
			for _, v := range z[i*10 : (i+1)*10] {
				got[i] = append(got[i], float64(v))
			}
		}
		tol := tolerance32(t, cfg, data[:16], got)
		for i := range want {
			for j := range want[i] {
				if d := math.Abs(want[i][j]-got[i][j]) / (1 + math.Abs(want[i][j])); !(d <= tol) {
					t.Fatalf("%s: row %d: GoMLX %v, inference %v (bound %.3g)", kind, i, want[i], got[i], tol)
				}
			}
		}
	}
}

// TestJobExport: train --export writes the inference file after a run;
// read from the TSV the run wrote, its test rows get the labels of the
// run's evaluation and so its test accuracy.
func TestJobExport(t *testing.T) {
	dir := t.TempDir()
	j := &Job{Config: toyConfig(arch.KindFDTNN), Task: TaskListOps, NTrain: 32, NEval: 0, NTest: 32, DataSeed: 3, WriteData: dir,
		Export: filepath.Join(dir, "m.kks")}
	j.Steps = 3
	rep, err := j.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, err := seqmodel.LoadFile(j.Export)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "listops_test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := tasks.ReadTSV(f, tasks.Classes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewScorer(seqmodel.ScorerOptions{MaxBatch: j.Batch})
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]int32
	for _, x := range samples {
		ids, err := m.Tokenize(x.Source)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ids[:min(len(ids), m.MaxLength())])
	}
	z, err := s.Logits(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for i, l := range seqmodel.Labels(z, tasks.Classes) {
		if l == samples[i].Target {
			correct++
		}
	}
	// 32 rows: the two passes of 16 of the run's evaluation, bit for bit
	// (TestExportMatchesEvaluate), so the same accuracy.
	if got := float64(correct) / float64(len(samples)); got != rep.TestAcc {
		t.Errorf("accuracy %v from the exported file, the run's %v", got, rep.TestAcc)
	}
}

func TestExportRefusesOtherVocabularies(t *testing.T) {
	for _, c := range []struct{ vocab, classes int }{{20, tasks.Classes}, {tasks.VocabSize, 3}} {
		cfg := toyConfig(arch.KindTNN)
		cfg.Model.Vocab, cfg.Model.Classes = c.vocab, c.classes
		cfg.Steps = 0
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Export(); err == nil || !strings.Contains(err.Error(), "vocabulary") {
			t.Errorf("vocabulary %d, %d classes: %v", c.vocab, c.classes, err)
		}
	}
}
