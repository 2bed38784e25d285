package cluster_test

import (
	"fmt"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/cluster"
)

// KMeans finds two well-separated groups of four points each; the centres
// are the groups' means. The cluster numbers depend on the seed, so the
// centres are printed in order of their first coordinate, and Nearest
// assigns new points to them.
func ExampleKMeans() {
	x := mat.NewDense(8, 2, []float64{
		0, 0,
		10, 10,
		1, 0,
		11, 10,
		0, 1,
		10, 11,
		1, 1,
		11, 11,
	})
	centres, assign, err := cluster.KMeans(x, 2, 1, 100)
	if err != nil {
		panic(err)
	}
	order := []int{0, 1}
	sort.Slice(order, func(i, j int) bool { return centres.At(order[i], 0) < centres.At(order[j], 0) })
	for _, c := range order {
		size := 0
		for _, a := range assign {
			if a == c {
				size++
			}
		}
		fmt.Printf("centre (%.2f, %.2f), %d points\n", centres.At(c, 0), centres.At(c, 1), size)
	}
	fmt.Println("(2, 1) joins the first:", cluster.Nearest(centres, []float64{2, 1}) == order[0])
	fmt.Println("(9, 12) joins the second:", cluster.Nearest(centres, []float64{9, 12}) == order[1])
	// Output:
	// centre (0.50, 0.50), 4 points
	// centre (10.50, 10.50), 4 points
	// (2, 1) joins the first: true
	// (9, 12) joins the second: true
}
