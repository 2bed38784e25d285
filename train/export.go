package train

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
)

// TasksVocabulary returns the vocabulary of the generated tasks and of LRA
// TSV files (package tasks: padding, the digits, the ListOps operators and
// ']', the recall query and filler, the keys a…z), by token id: the
// vocabulary of every model package train trains.
func TasksVocabulary() []string {
	out := make([]string, tasks.VocabSize)
	out[0] = "<pad>"
	for id := 1; id < tasks.VocabSize; id++ {
		out[id] = tasks.Decode([]int32{int32(id)})[0]
	}
	return out
}

// TasksTokenizer is the tokenizer of package tasks (tasks.Tokenize): white
// space, the parentheses of the LRA ListOps format dropped.
func TasksTokenizer() seqmodel.Tokenizer {
	return seqmodel.Tokenizer{Split: seqmodel.SplitWhitespace, Drop: []string{"(", ")"}}
}

// TasksClasses returns the class names of the tasks, "0" … "9" (the
// ListOps values and the recall digits).
func TasksClasses() []string {
	out := make([]string, tasks.Classes)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// Export returns the inference model of a checkpoint: its model settings
// and weights (parameters and random features; no optimiser state, step
// counters or generator state), with the tasks' vocabulary, tokenizer and
// class names (TasksVocabulary, TasksTokenizer, TasksClasses), which a
// model of another vocabulary size or number of classes cannot use.
func Export(ck *Checkpoint) (*seqmodel.Model, error) {
	return exportVariables(ck.Model, ck.Seed, ck.Step, toNative(ck.Variables))
}

// ExportFile reads the checkpoint at path (refused beforehand when reading
// it would exceed the memory budget maxMemory, 0 for DefaultMaxMemory)
// and writes its inference model to out atomically.
func ExportFile(path, out string, maxMemory int64) error {
	if err := checkCheckpointFile(path, maxMemory); err != nil {
		return err
	}
	ck, err := ReadCheckpoint(path)
	if err != nil {
		return err
	}
	m, err := Export(ck)
	if err != nil {
		return fmt.Errorf("train: %s: %w", path, err)
	}
	return m.WriteFile(out)
}

// Export returns the inference model of the trainer's current weights (see
// the function Export).
func (t *Trainer) Export() (*seqmodel.Model, error) {
	vars, err := t.modelVariables()
	if err != nil {
		return nil, err
	}
	return exportVariables(t.cfg.Model, t.cfg.Seed, int64(t.step), vars)
}

// modelVariables returns the trainer's variables (the model's among them),
// those of the engine (the graph engine builds its model first if no step
// or evaluation has built it yet).
func (t *Trainer) modelVariables() ([]native.Variable, error) {
	return t.eng.Variables()
}

// exportVariables builds the inference model of a model's variables with
// the tasks' vocabulary, tokenizer and classes.
func exportVariables(cfg arch.ModelConfig, seed uint64, step int64, vars []native.Variable) (*seqmodel.Model, error) {
	if cfg.Vocab != tasks.VocabSize || cfg.Classes != tasks.Classes {
		return nil, fmt.Errorf("train: the model reads %d token ids into %d classes; the tasks' vocabulary has %d tokens and %d classes (build the inference model with seqmodel.New and a vocabulary of its own)",
			cfg.Vocab, cfg.Classes, tasks.VocabSize, tasks.Classes)
	}
	if len(vars) == 0 {
		return nil, errors.New("train: the model has no variables to export")
	}
	return seqmodel.New(seqmodel.Header{Model: cfg, Vocabulary: TasksVocabulary(), Tokenizer: TasksTokenizer(),
		Classes: TasksClasses(), Seed: seed, Step: step}, vars)
}

// exportTo writes the inference model of the trainer's weights to path
// atomically.
func (t *Trainer) exportTo(path string) error {
	m, err := t.Export()
	if err != nil {
		return err
	}
	return m.WriteFile(path)
}
