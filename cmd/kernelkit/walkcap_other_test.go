//go:build !linux

package main

// capAddressSpace does nothing outside Linux.
func capAddressSpace(uint64) (restore func()) { return func() {} }
