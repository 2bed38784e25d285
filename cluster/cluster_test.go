package cluster

import (
	"testing"

	"math"

	"github.com/kernelkit/kernelkit/sampler"
)

func TestKMeans(t *testing.T) {
	g, _ := sampler.Gaussian{}.Sample(200, 2, 1)
	for i := 0; i < 200; i++ {
		if i%2 == 0 {
			g.Set(i, 0, g.At(i, 0)*0.1+5)
		} else {
			g.Set(i, 0, g.At(i, 0)*0.1-5)
		}
	}
	c, a, err := KMeans(g, 2, 3, 50)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if a[i] != a[i%2] {
			t.Fatal("k-means split a well-separated cluster")
		}
	}
	if math.Abs(math.Abs(c.At(0, 0))-5) > 0.1 {
		t.Errorf("centre %v", c.At(0, 0))
	}
	if _, _, err := KMeans(g, 201, 1, 5); err == nil {
		t.Error("k larger than the points accepted")
	}
	if _, _, err := KMeans(g, 0, 1, 5); err == nil {
		t.Error("k = 0 accepted")
	}
}
