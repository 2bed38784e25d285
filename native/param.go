package native

// Param is one trainable (or fixed) tensor of a native model. Scope and Name
// are the scope and name of the GoMLX context variable that holds the same
// tensor in nn.Logits (for example "/block_0/gtu" and "wu"), so
// a checkpoint written by either engine (train.SavedVariable) loads in the
// other. Dims is the tensor's shape, Value its elements row-major, and Grad
// (same length as Value) the gradient that layers' Backward methods
// accumulate into. Trainable is false for fixed random features, which the
// optimiser leaves untouched.
type Param[T Float] struct {
	Scope, Name string
	Dims        []int
	Value, Grad []T
	Trainable   bool
}

// newParam returns a Param of the given scope, name and shape with zeroed
// value and gradient.
func newParam[T Float](scope, name string, trainable bool, dims ...int) *Param[T] {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return &Param[T]{Scope: scope, Name: name, Dims: append([]int(nil), dims...),
		Value: make([]T, n), Grad: make([]T, n), Trainable: trainable}
}

// ZeroGrad sets every element of p.Grad to zero.
func (p *Param[T]) ZeroGrad() {
	clear(p.Grad)
}
