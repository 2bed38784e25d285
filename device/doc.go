// Package device runs kernelkit's heavy paths as GoMLX graphs on an
// execution device: an NVIDIA GPU through GoMLX's XLA backend and the CUDA
// PJRT plugin ("cuda", in a program built with CGO_ENABLED=1 and -tags
// xla), or GoMLX's pure-Go backend ("go"), which runs the very same graphs
// on the CPU so that tests exercise them on machines with no GPU.
//
// The default build links no XLA and no cgo; Open("cuda") then returns an
// error saying how to build a program that has it. Each operation is one
// graph written once; tests compare it on the pure-Go backend with
// kernelkit's CPU path, and the same tests run on a GPU when one is present
// (scripts/gpu.sh builds them with -tags xla and runs them there).
//
// # Errors
//
// Shapes that do not agree with a map or a device's graphs are programmer
// misuse and panic, as in package features; a device that cannot be opened,
// sizes out of range and data errors are returned.
package device
