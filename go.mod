module github.com/kernelkit/kernelkit

go 1.26

require (
	github.com/ebitengine/purego v0.11.3
	gonum.org/v1/gonum v0.17.0
)
